#if canImport(FoundationNetworking)
import Dispatch
import Foundation
import Synchronization

/// The delegate events of one end of a bound pair, on their way to its
/// delegate: queued in the order they happened and delivered one at a time,
/// each as its own work item on the stream's target, never under a lock.
///
/// The target, as Apple's streams choose it: the dispatch queue set with
/// `CF…StreamSetDispatchQueue` if any, else the first run loop the stream
/// is scheduled in (in all the modes it is scheduled in there), else a
/// private serial queue of the stream's own. Apple delivers nothing to an
/// unscheduled stream; Linux programs seldom run a run loop, so delivering
/// anyway keeps delegate-driven code working where it would otherwise hang.
///
/// One event per work item (not a loop over all that are queued) so other
/// work on a shared queue or run loop runs between events, as with Apple's.
/// At most one work item is responsible at a time (`draining`), so even a
/// concurrent queue gets the events one after another. An event that is
/// still waiting is not queued twice. Events queued before the stream was
/// closed are dropped: Apple's closed streams report nothing.
final class BoundStreamEventChannel: Sendable {
    private struct State {
        /// The stream the events are about; weak, as the stream owns this.
        var owner = WeakStreamReference()
        var delegate = WeakStreamDelegate()
        var queue: DispatchQueue?
        var schedules: [RunLoopSchedule] = []
        var privateQueue: DispatchQueue?
        var pending: [Stream.Event] = []
        /// A work item is responsible for the queued events: it delivers
        /// one, then sends the next item, until none is left.
        var draining = false
        /// The responsible item is in the delegate's call.
        var delivering = false
        var closed = false
        /// The responsible item's number. A new target takes over from an
        /// item sent to the old one but not yet run (it may never run: a
        /// run loop that stopped); the old one, when it runs, does nothing.
        var generation = 0

        mutating func target() -> BoundStreamEventTarget {
            if let queue { return .queue(queue) }
            if let first = schedules.first {
                return .runLoop(schedules.filter { $0.runLoopID == first.runLoopID })
            }
            let own = privateQueue ?? DispatchQueue(label: "URLSessionCompat.BoundStream.events")
            privateQueue = own
            return .queue(own)
        }

        /// After a change of target: the work item to send there, if one
        /// is waiting for the old target. One in the delegate's call sends
        /// its successor to the new target itself when it returns.
        mutating func retarget(_ channel: BoundStreamEventChannel) -> BoundStreamEventLaunch? {
            generation += 1
            guard draining, !delivering, !closed else { return nil }
            return BoundStreamEventLaunch(channel: channel, target: target(), generation: generation)
        }
    }

    /// What one work item does, decided under the lock.
    private enum Step: Sendable {
        case stop
        case deliver(Stream.Event, to: WeakStreamDelegate, about: WeakStreamReference)
    }

    private let state = Mutex(State())

    init() {}

    deinit {
        // A freed stream leaves the run loops it was scheduled in.
        let schedules = state.withLock { $0.schedules }
        for schedule in schedules { schedule.end() }
    }

    /// Names the stream the events are about (once, from its initializer).
    func attach(_ owner: Stream) {
        let reference = WeakStreamReference(owner)
        state.withLock { $0.owner = reference }
    }

    var delegate: (any StreamDelegate)? {
        get { state.withLock { $0.delegate }.value }
        set {
            let reference = WeakStreamDelegate(newValue)
            state.withLock { $0.delegate = reference }
        }
    }

    /// `CF…StreamSetDispatchQueue`: events go to `queue` from now on
    /// (`nil`: back to the run loops or the private queue). A queue replaces
    /// the run loop schedules, as on Apple, where a stream is on either.
    func setDispatchQueue(_ queue: DispatchQueue?) {
        let (ended, launch) = state.withLock { state -> ([RunLoopSchedule], BoundStreamEventLaunch?) in
            guard !state.closed else { return ([], nil) }
            let ended = queue == nil ? [] : state.schedules
            if queue != nil { state.schedules.removeAll() }
            state.queue = queue
            return (ended, state.retarget(self))
        }
        for schedule in ended { schedule.end() }
        launch?.start()
    }

    /// `schedule(in:forMode:)`: adds to the run loops, replacing a dispatch queue.
    func schedule(in runLoop: RunLoop, forMode mode: RunLoop.Mode) {
        let id = ObjectIdentifier(runLoop)
        let known = state.withLock { state in
            state.closed || state.schedules.contains { $0.runLoopID == id && $0.mode == mode }
        }
        guard !known else { return }
        let schedule = RunLoopSchedule(runLoop: runLoop, mode: mode)
        let (added, launch) = state.withLock { state -> (Bool, BoundStreamEventLaunch?) in
            // Checked again: another thread may have closed or scheduled it since.
            guard !state.closed, !state.schedules.contains(where: { $0.runLoopID == id && $0.mode == mode }) else {
                return (false, nil)
            }
            state.schedules.append(schedule)
            state.queue = nil
            return (true, state.retarget(self))
        }
        if !added { schedule.end() }
        launch?.start()
    }

    /// `remove(from:forMode:)`: undoes one `schedule(in:forMode:)`.
    func remove(from runLoop: RunLoop, forMode mode: RunLoop.Mode) {
        let id = ObjectIdentifier(runLoop)
        let (removed, launch) = state.withLock { state -> ([RunLoopSchedule], BoundStreamEventLaunch?) in
            let removed = state.schedules.filter { $0.runLoopID == id && $0.mode == mode }
            guard !removed.isEmpty else { return ([], nil) }
            state.schedules.removeAll { $0.runLoopID == id && $0.mode == mode }
            return (removed, state.retarget(self))
        }
        for schedule in removed { schedule.end() }
        launch?.start()
    }

    /// The stream closed: nothing more is delivered, and it leaves its run loops.
    func close() {
        let ended = state.withLock { state -> [RunLoopSchedule] in
            state.closed = true
            state.pending.removeAll()
            let ended = state.schedules
            state.schedules.removeAll()
            return ended
        }
        for schedule in ended { schedule.end() }
    }

    /// Queues `event`. Returns the work item to send when none is
    /// responsible; the caller sends it (`start()`) after releasing its own
    /// lock, so events queued under that lock keep their order.
    func enqueue(_ event: Stream.Event) -> BoundStreamEventLaunch? {
        state.withLock { state -> BoundStreamEventLaunch? in
            // Coalesced, as CFStream coalesces the events it has not yet
            // delivered: one that is still waiting says it already.
            guard !state.closed, !state.pending.contains(event) else { return nil }
            state.pending.append(event)
            guard !state.draining else { return nil }
            state.draining = true
            return BoundStreamEventLaunch(channel: self, target: state.target(), generation: state.generation)
        }
    }

    /// One work item: delivers the oldest event, then sends the next item.
    fileprivate func deliverNext(generation: Int) {
        let step = state.withLock { state -> Step in
            // Replaced by an item sent to a newer target: that one is responsible.
            guard state.generation == generation else { return .stop }
            if state.closed || state.pending.isEmpty {
                state.draining = false
                return .stop
            }
            state.delivering = true
            return .deliver(state.pending.removeFirst(), to: state.delegate, about: state.owner)
        }
        guard case .deliver(let event, let delegate, let stream) = step else { return }
        if let stream = stream.value, let delegate = delegate.value {
            delegate.stream(stream, handle: event)
        }
        let next = state.withLock { state -> BoundStreamEventLaunch? in
            state.delivering = false
            guard !state.closed, !state.pending.isEmpty else {
                state.draining = false
                return nil
            }
            return BoundStreamEventLaunch(channel: self, target: state.target(), generation: state.generation)
        }
        next?.start()
    }
}

/// A work item to send to a channel's target: delivers one event there.
struct BoundStreamEventLaunch: Sendable {
    fileprivate let channel: BoundStreamEventChannel
    fileprivate let target: BoundStreamEventTarget
    fileprivate let generation: Int

    func start() {
        let channel = channel
        let generation = generation
        target.run { channel.deliverNext(generation: generation) }
    }
}

/// The stream an event is about, held weakly (the stream owns its channel).
///
/// `@unchecked Sendable`: InputStream and OutputStream are not Sendable, but
/// the bound streams named here are thread-safe (all their state is behind
/// the pair's lock or the channel's Mutex); on the delivering thread the
/// stream is only handed to its delegate, as Apple's streams do. Loading a
/// weak reference is atomic in the Swift runtime.
struct WeakStreamReference: @unchecked Sendable {
    weak var value: Stream?

    init(_ value: Stream? = nil) {
        self.value = value
    }
}

/// A stream's delegate, held weakly as Apple's streams hold it.
///
/// `@unchecked Sendable`: it crosses to the thread that delivers the events,
/// and the delegate is called there only, one event at a time, which is the
/// contract Apple's streams give their delegates (the queue or run loop the
/// stream is scheduled on). The reference itself is only copied under the
/// channel's lock; loading a weak reference is atomic in the Swift runtime.
struct WeakStreamDelegate: @unchecked Sendable {
    weak var value: (any StreamDelegate)?

    init(_ value: (any StreamDelegate)? = nil) {
        self.value = value
    }
}
#endif
