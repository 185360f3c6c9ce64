internal import CCurl
import Glibc
import Synchronization

/// A multi-producer, single-consumer queue of engine commands with an eventfd
/// to wake the engine thread.
///
/// Why an eventfd write only when the queue goes from empty to non-empty: a
/// burst of commands (thousands of task starts) then costs one syscall, and the
/// engine drains the whole batch at once.
final class CommandQueue: Sendable {
    let eventFD: Int32
    private let pending = Mutex<[EngineCommand]>([])

    init() {
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        precondition(fd >= 0, "eventfd failed: errno \(errno)")
        eventFD = fd
    }

    func enqueue(_ command: EngineCommand) {
        let wasEmpty = pending.withLock { queue in
            queue.append(command)
            return queue.count == 1
        }
        if wasEmpty {
            var one: UInt64 = 1
            // EAGAIN means the counter is already non-zero: the engine is awake.
            _ = withUnsafeBytes(of: &one) { write(eventFD, $0.baseAddress, 8) }
        }
    }

    /// Takes every queued command. Called on the engine thread only.
    func drain(into batch: inout [EngineCommand]) {
        var counter: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &counter) { read(eventFD, $0.baseAddress, 8) }
        pending.withLock { queue in
            swap(&queue, &batch)
        }
    }
}
