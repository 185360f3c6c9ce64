#if canImport(FoundationNetworking)
import Foundation

/// What the two ends of a bound stream pair share: the bytes in between,
/// each end's state, and the rules of CFStreamCreateBoundPair.
///
/// - A write blocks until at least one byte of space is free, then takes as
///   much as fits; a read blocks until at least one byte is there or the
///   writer has closed. Memory never exceeds the capacity.
/// - Closing the output is the end of the input: reads drain what is left,
///   then return 0 and the input is `.atEnd`.
/// - Closing the input (or freeing it) is the end of the output, as Apple's
///   bound pairs have it (swift-openapi-urlsession's tests check it on
///   Apple's platforms): at once if open or when it opens, the output is
///   `.atEnd` with no error and hears `.endEncountered`, and its writes,
///   waiting ones included, return 0.
/// - Closing either end wakes whatever waits on the other, and whatever
///   waits on that same end (a read or write waiting on a stream that
///   another thread closes returns -1 with ECANCELED, never 0, so a cut-off
///   body is never taken for a complete one).
///
/// Statuses: `.notOpen`, then `.open` at once (opening a bound pair waits
/// for nothing, so `.opening` is never seen, nor `.reading`/`.writing`);
/// the input `.atEnd` once the output is closed and the bytes drained; the
/// output `.atEnd` when the input closed first; `.closed`. Reading or
/// writing a stream that is not open returns -1 and sets `streamError`
/// (EBADF) without changing the status: a stream not yet open can still be
/// opened, which clears it.
///
/// Delegate events are edge-triggered, as CFStream's are, so none is sent
/// twice for one state: `.openCompleted` on open; `.hasBytesAvailable` when
/// bytes arrive and no such event is outstanding (one is outstanding from
/// when it is sent until the next read), and again after a read that leaves
/// bytes; `.hasSpaceAvailable` on open, after each write that leaves space,
/// and when a read frees space after a write found none (one is outstanding
/// until the next write); `.endEncountered` once, when the writer has closed
/// and the bytes are drained (after a `.hasBytesAvailable`, since a read
/// would return the end at once), and on the output when the input closes
/// first. On top of
/// that, an event still waiting to be delivered is not queued again
/// (`BoundStreamEventChannel`).
///
/// The lock is an `NSCondition`, not `Synchronization.Mutex`: reads and
/// writes block, and a Mutex has no condition to wait on. NSCondition is a
/// pthread mutex and condition, which ThreadSanitizer also sees.
///
/// `@unchecked Sendable`: every `var` here is read and written only with
/// `condition` locked (all through `locked(_:)`); the event channels are
/// Sendable themselves.
final class BoundStreamBuffer: @unchecked Sendable {
    /// Which end of the pair: the reader or the writer. The two ends keep
    /// the same kind of state, so each rule both follow (opening, closing,
    /// a read or write waiting for its turn) is written once, for a side.
    enum Side {
        case input, output
    }

    enum Phase {
        case notOpen, open, closed
        /// The output only: the input closed first. As at a fixed-length
        /// stream's end (and as Apple's bound pairs do), writes return 0,
        /// the status is `.atEnd` and the delegate hears `.endEncountered`,
        /// with no error: the reader going away is how an upload ends early
        /// (the server answered), not a failure of the writer.
        case ended
    }

    private struct End {
        var phase = Phase.notOpen
        var error: NSError?
        /// Reads (on the input) or writes (on the output) blocked in `transfer`.
        var waiting = 0
        /// `.hasBytesAvailable` (input) or `.hasSpaceAvailable` (output) was
        /// sent and no read or write has followed it yet.
        var eventOutstanding = false
    }

    /// What one try of a read or write found (see `transfer`).
    private enum Attempt {
        /// Bytes went through the ring: the count to return.
        case moved(Int)
        /// The answer without moving bytes (the reader at the end).
        case finished(Int)
        /// Nothing to move yet: wait for the other end.
        case blocked
    }

    private let inputEvents = BoundStreamEventChannel()
    private let outputEvents = BoundStreamEventChannel()
    private let condition = NSCondition()
    private var ring: BoundStreamRing
    private var input = End()
    private var output = End()
    private var endEventSent = false
    /// A read returned 0: the reader has seen the end.
    private var endRead = false

    /// - Parameter capacity: the most bytes held between writer and reader; at least 1.
    init(capacity: Int) {
        ring = BoundStreamRing(capacity: max(1, capacity))
    }

    var capacity: Int { ring.capacity }

    /// The delegate events of `side`.
    func events(_ side: Side) -> BoundStreamEventChannel {
        switch side {
        case .input: inputEvents
        case .output: outputEvents
        }
    }

    /// Only with the lock held.
    private subscript(side: Side) -> End {
        get {
            switch side {
            case .input: input
            case .output: output
            }
        }
        set {
            switch side {
            case .input: input = newValue
            case .output: output = newValue
            }
        }
    }

    // MARK: Either end

    /// Opens `side` (once; a second open does nothing). The output of a pair
    /// whose input already closed opens at its end.
    func open(_ side: Side) {
        locked { launches in
            guard self[side].phase == .notOpen else { return }
            self[side].error = nil
            post(.openCompleted, to: side, &launches)
            if side == .output, input.phase == .closed {
                output.phase = .ended
                post(.endEncountered, to: .output, &launches)
            } else {
                self[side].phase = .open
                announce(to: side, &launches)
            }
        }
    }

    /// Closes `side`: its events stop, and whatever waits on either end wakes.
    /// Closing the input drops the bytes nobody can read now and ends an open
    /// output; closing the output lets the reader see the end.
    func close(_ side: Side) {
        locked { launches in
            guard self[side].phase != .closed else { return }
            self[side].phase = .closed
            events(side).close()
            condition.broadcast()
            switch side {
            case .input:
                ring.removeAll()
                if output.phase == .open {
                    output.phase = .ended
                    post(.endEncountered, to: .output, &launches)
                }
            case .output:
                announce(to: .input, &launches)
            }
        }
    }

    func status(_ side: Side) -> Stream.Status {
        locked { _ in
            switch self[side].phase {
            case .notOpen: .notOpen
            case .open: side == .input && output.phase == .closed && ring.count == 0 ? .atEnd : .open
            case .closed: .closed
            case .ended: .atEnd
            }
        }
    }

    func error(_ side: Side) -> NSError? { locked { _ in self[side].error } }

    /// What a read and a write share: check the length and the end's phase,
    /// `attempt` the move, and wait for the other end while it is blocked.
    /// After bytes moved, both ends hear what changed, this one first.
    private func transfer(
        _ side: Side, maxLength: Int,
        _ attempt: (inout [BoundStreamEventLaunch]) -> Attempt
    ) -> Int {
        locked { launches in
            guard maxLength >= 0 else {
                self[side].error = BoundStreamError.invalidLength()
                return -1
            }
            var waited = false
            while true {
                switch self[side].phase {
                case .ended:
                    return 0  // The reader is gone: the end, as at a fixed-length stream's.
                case .notOpen, .closed:
                    self[side].error = waited ? BoundStreamError.closedWhileWaiting() : BoundStreamError.notOpen()
                    return -1
                case .open:
                    break
                }
                if maxLength == 0 { return 0 }
                switch attempt(&launches) {
                case .moved(let count):
                    condition.broadcast()
                    self[side].eventOutstanding = false
                    announce(to: side, &launches)
                    announce(to: side == .input ? .output : .input, &launches)
                    return count
                case .finished(let result):
                    return result
                case .blocked:
                    self[side].waiting += 1
                    condition.wait()
                    self[side].waiting -= 1
                    waited = true
                }
            }
        }
    }

    // MARK: Input

    func read(into destination: UnsafeMutablePointer<UInt8>, maxLength: Int) -> Int {
        transfer(.input, maxLength: maxLength) { launches in
            if ring.count > 0 { return .moved(ring.remove(into: destination, length: maxLength)) }
            guard output.phase == .closed else { return .blocked }
            endRead = true
            announce(to: .input, &launches)
            return .finished(0)
        }
    }

    /// Bytes are waiting and the input is open, or the writer has closed
    /// and no read has returned the end yet: as Apple documents it, true
    /// when a read must be tried to learn what there is (a reader that reads
    /// only while this is true learns the end from its 0).
    var hasBytesAvailable: Bool {
        locked { _ in input.phase == .open && (ring.count > 0 || (output.phase == .closed && !endRead)) }
    }

    // MARK: Output

    func write(from source: UnsafePointer<UInt8>, maxLength: Int) -> Int {
        transfer(.output, maxLength: maxLength) { _ in
            ring.freeSpace > 0 ? .moved(ring.append(from: source, length: maxLength)) : .blocked
        }
    }

    var hasSpaceAvailable: Bool { locked { _ in output.phase == .open && ring.freeSpace > 0 } }

    // MARK: For tests

    /// What the tests check: bytes held, and who is blocked.
    var snapshot: (count: Int, capacity: Int, waitingReaders: Int, waitingWriters: Int) {
        locked { _ in (ring.count, ring.capacity, input.waiting, output.waiting) }
    }

    // MARK: Events

    private func announce(to side: Side, _ launches: inout [BoundStreamEventLaunch]) {
        switch side {
        case .input: announceToReader(&launches)
        case .output: announceToWriter(&launches)
        }
    }

    /// Tells the reader what changed, once per change (see the type's notes).
    private func announceToReader(_ launches: inout [BoundStreamEventLaunch]) {
        guard input.phase == .open else { return }
        if ring.count > 0 {
            guard !input.eventOutstanding else { return }
            input.eventOutstanding = true
            post(.hasBytesAvailable, to: .input, &launches)
        } else if output.phase == .closed, !endEventSent {
            // A read would not block (it returns the end): say so, as for
            // bytes, for a reader that reads only on `.hasBytesAvailable`;
            // then the end itself.
            endEventSent = true
            if !endRead, !input.eventOutstanding {
                input.eventOutstanding = true
                post(.hasBytesAvailable, to: .input, &launches)
            }
            post(.endEncountered, to: .input, &launches)
        }
    }

    /// Tells the writer there is space, once per change.
    private func announceToWriter(_ launches: inout [BoundStreamEventLaunch]) {
        guard output.phase == .open, ring.freeSpace > 0, !output.eventOutstanding else { return }
        output.eventOutstanding = true
        post(.hasSpaceAvailable, to: .output, &launches)
    }

    /// Queues the event now, under the lock, so events keep the order of
    /// the changes; its delivery starts after the lock is released.
    private func post(_ event: Stream.Event, to side: Side, _ launches: inout [BoundStreamEventLaunch]) {
        if let launch = events(side).enqueue(event) { launches.append(launch) }
    }

    /// Runs `body` with the lock held, then starts the deliveries it queued.
    private func locked<Result>(_ body: (inout [BoundStreamEventLaunch]) -> Result) -> Result {
        var launches: [BoundStreamEventLaunch] = []
        condition.lock()
        let result = body(&launches)
        condition.unlock()
        for launch in launches { launch.start() }
        return result
    }
}
#endif
