internal import CCurl
import Glibc
import Synchronization

/// A multi-producer, single-consumer queue of engine commands with an eventfd
/// to wake the engine thread.
///
/// Why the eventfd is written only while the engine is about to block in
/// epoll_wait: an awake engine drains the queue at the end of its turn anyway,
/// so a write (and the engine's read to reset the counter) would be two
/// syscalls for nothing. A burst of commands costs at most one write.
final class CommandQueue: Sendable {
    let eventFD: Int32

    private struct State {
        /// Optional so that the engine can take each command out by moving
        /// it (`take()`), not copying it (see `EngineLoop.runCommands`).
        var queue: [EngineCommand?] = []
        /// The engine checked the queue empty and will block: the next
        /// producer must write the eventfd.
        var engineSleeping = false
        /// The eventfd was written and not yet read.
        var signaled = false
    }

    private let state = Mutex(State())

    init() {
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        precondition(fd >= 0, "eventfd failed: errno \(errno)")
        eventFD = fd
    }

    /// Takes the command (moved into the queue, not copied: a start command
    /// holds a whole TransferRequest, and a copy retained each of its fields).
    func enqueue(_ command: consuming EngineCommand) {
        var pending = Optional(command)
        let wake = state.withLock { state -> Bool in
            state.queue.append(pending.take())
            guard state.engineSleeping else { return false }
            // One write wakes it; later producers see it awake.
            state.engineSleeping = false
            state.signaled = true
            return true
        }
        if wake {
            var one: UInt64 = 1
            _ = withUnsafeBytes(of: &one) { write(eventFD, $0.baseAddress, 8) }
        }
    }

    /// Engine thread, before blocking in epoll_wait: false when commands are
    /// waiting (then it must not block). Checked under the same lock that
    /// producers append under, so no command can slip in unseen.
    func prepareToSleep() -> Bool {
        state.withLock { state in
            guard state.queue.isEmpty else { return false }
            state.engineSleeping = true
            return true
        }
    }

    /// Engine thread, after epoll_wait returned.
    func awoke() {
        state.withLock { $0.engineSleeping = false }
    }

    /// Takes every queued command. Called on the engine thread only.
    func drain(into batch: inout [EngineCommand?]) {
        let signaled = state.withLock { state -> Bool in
            swap(&state.queue, &batch)
            defer { state.signaled = false }
            return state.signaled
        }
        if signaled {
            var counter: UInt64 = 0
            _ = withUnsafeMutableBytes(of: &counter) { read(eventFD, $0.baseAddress, 8) }
        }
    }
}
