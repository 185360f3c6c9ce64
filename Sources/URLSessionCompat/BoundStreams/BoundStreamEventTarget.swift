#if canImport(FoundationNetworking)
import Dispatch
import Foundation
import Synchronization

// Where a bound stream's delegate events run: a dispatch queue (the one set
// with `CFReadStreamSetDispatchQueue`/`CFWriteStreamSetDispatchQueue`, or the
// stream's private one) or a run loop the stream is scheduled in.

/// One (run loop, mode) a stream is scheduled in, with the timer that keeps
/// that run loop running while it is, and wakes it for each event.
///
/// Why a timer: on Apple, a scheduled stream is a run loop source, so
/// `RunLoop.current.run()` keeps running while a stream is scheduled and
/// returns once none is. swift-corelibs-foundation's `run(mode:before:)`
/// returns at once when the mode has no source or timer, so code ported as
/// is would spin through its run loop and never see an event; a timer that
/// is due only when woken stands in for the source. And
/// `RunLoop.perform(inModes:block:)` (CFRunLoopPerformBlock) only queues
/// its block: a run loop asleep in `run(until:)` would not run it until
/// something else woke it. Moving the timer's fire date to now wakes it
/// (CF re-arms its timer), and the woken pass runs the queued blocks.
///
/// One timer per schedule, made once: swift-corelibs-foundation's `Timer`
/// is never freed (its CF timer keeps a reference that nothing releases),
/// so a timer per event would leak memory for as long as events flow.
///
/// `@unchecked Sendable`: `RunLoop` and `Timer` are not Sendable, but away
/// from the run loop's own thread the only calls made on them are
/// `RunLoop.add(_:forMode:)`, `RunLoop.perform(inModes:block:)` and setting
/// `Timer.fireDate`, which CFRunLoop makes thread-safe (each takes the run
/// loop's or the timer's lock). The timer invalidates itself, on the run
/// loop's thread.
struct RunLoopSchedule: @unchecked Sendable {
    let runLoop: RunLoop
    let mode: RunLoop.Mode
    /// Compared instead of the run loop itself, so no lock has to hold it.
    let runLoopID: ObjectIdentifier
    private let timer: Timer
    private let ended: ScheduleEnd

    /// Adds the timer to the run loop.
    init(runLoop: RunLoop, mode: RunLoop.Mode) {
        self.runLoop = runLoop
        self.mode = mode
        self.runLoopID = ObjectIdentifier(runLoop)
        let ended = ScheduleEnd()
        self.ended = ended
        // Due only when woken; repeating, so it stays after each wake (the
        // interval, about a year, is only how long until it would fire unwoken).
        timer = Timer(fire: .distantFuture, interval: 365 * 24 * 3600, repeats: true) { timer in
            if ended.isEnded { timer.invalidate() }
        }
        runLoop.add(timer, forMode: mode)
    }

    /// Wakes the run loop, so it runs the blocks queued for it.
    func wake() {
        timer.fireDate = Date()
    }

    /// Lets the run loop end (if nothing else keeps it running): the timer,
    /// woken, invalidates itself on the run loop's thread, whose pass then
    /// finds the mode empty. Invalidated from here, a sleeping run loop would
    /// not notice until something else woke it.
    func end() {
        ended.end()
        wake()
    }
}

/// Whether a schedule has ended; read by its timer on the run loop's thread.
final class ScheduleEnd: Sendable {
    private let state = Mutex(false)

    var isEnded: Bool { state.withLock { $0 } }

    func end() {
        state.withLock { $0 = true }
    }
}

/// Where one event is sent to be delivered.
enum BoundStreamEventTarget: Sendable {
    case queue(DispatchQueue)
    /// A run loop, in every mode the stream is scheduled in on it.
    case runLoop([RunLoopSchedule])

    /// Runs `work` there, once.
    func run(_ work: @escaping @Sendable () -> Void) {
        switch self {
        case .queue(let queue):
            queue.async(execute: work)
        case .runLoop(let schedules):
            guard let first = schedules.first else { return }
            first.runLoop.perform(inModes: schedules.map(\.mode), block: work)
            for schedule in schedules { schedule.wake() }
        }
    }
}
#endif
