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
    }

    let inputEvents = BoundStreamEventChannel()
    let outputEvents = BoundStreamEventChannel()
    private let condition = NSCondition()
    private var ring: BoundStreamRing
    private var input = End()
    private var output = End()
    private var bytesEventOutstanding = false
    private var spaceEventOutstanding = false
    private var endEventSent = false
    /// A read returned 0: the reader has seen the end.
    private var endRead = false
    private var waitingReaders = 0
    private var waitingWriters = 0

    /// - Parameter capacity: the most bytes held between writer and reader; at least 1.
    init(capacity: Int) {
        ring = BoundStreamRing(capacity: max(1, capacity))
    }

    var capacity: Int { ring.capacity }

    // MARK: Input

    func openInput() {
        locked { launches in
            guard input.phase == .notOpen else { return }
            input.phase = .open
            input.error = nil
            post(.openCompleted, to: inputEvents, &launches)
            announceToReader(&launches)
        }
    }

    func closeInput() {
        locked { launches in
            guard input.phase != .closed else { return }
            input.phase = .closed
            inputEvents.close()
            // Nobody can read them any more.
            ring.removeAll()
            condition.broadcast()
            if output.phase == .open {
                output.phase = .ended
                post(.endEncountered, to: outputEvents, &launches)
            }
        }
    }

    func read(into destination: UnsafeMutablePointer<UInt8>, maxLength: Int) -> Int {
        locked { launches in
            guard maxLength >= 0 else {
                input.error = BoundStreamError.invalidLength()
                return -1
            }
            var waited = false
            while true {
                guard input.phase == .open else {
                    input.error = waited ? BoundStreamError.closedWhileWaiting() : BoundStreamError.notOpen()
                    return -1
                }
                if maxLength == 0 { return 0 }
                if ring.count > 0 {
                    let count = ring.remove(into: destination, length: maxLength)
                    condition.broadcast()
                    bytesEventOutstanding = false
                    announceToReader(&launches)
                    announceToWriter(&launches)
                    return count
                }
                if output.phase == .closed {
                    endRead = true
                    announceToReader(&launches)
                    return 0
                }
                waitingReaders += 1
                condition.wait()
                waitingReaders -= 1
                waited = true
            }
        }
    }

    var inputStatus: Stream.Status {
        locked { _ in
            switch input.phase {
            case .notOpen: .notOpen
            case .open: output.phase == .closed && ring.count == 0 ? .atEnd : .open
            case .closed: .closed
            case .ended: .atEnd
            }
        }
    }

    var inputError: NSError? { locked { _ in input.error } }

    /// Bytes are waiting and the input is open, or the writer has closed
    /// and no read has returned the end yet: as Apple documents it, true
    /// when a read must be tried to learn what there is (a reader that reads
    /// only while this is true learns the end from its 0).
    var hasBytesAvailable: Bool {
        locked { _ in input.phase == .open && (ring.count > 0 || (output.phase == .closed && !endRead)) }
    }

    // MARK: Output

    func openOutput() {
        locked { launches in
            guard output.phase == .notOpen else { return }
            output.error = nil
            post(.openCompleted, to: outputEvents, &launches)
            if input.phase == .closed {
                output.phase = .ended
                post(.endEncountered, to: outputEvents, &launches)
            } else {
                output.phase = .open
                announceToWriter(&launches)
            }
        }
    }

    func closeOutput() {
        locked { launches in
            guard output.phase != .closed else { return }
            output.phase = .closed
            outputEvents.close()
            condition.broadcast()
            announceToReader(&launches)
        }
    }

    func write(from source: UnsafePointer<UInt8>, maxLength: Int) -> Int {
        locked { launches in
            guard maxLength >= 0 else {
                output.error = BoundStreamError.invalidLength()
                return -1
            }
            var waited = false
            while true {
                switch output.phase {
                case .ended:
                    return 0  // The reader is gone: the end, as at a fixed-length stream's.
                case .notOpen, .closed:
                    output.error = waited ? BoundStreamError.closedWhileWaiting() : BoundStreamError.notOpen()
                    return -1
                case .open:
                    break
                }
                if maxLength == 0 { return 0 }
                if ring.freeSpace > 0 {
                    let count = ring.append(from: source, length: maxLength)
                    condition.broadcast()
                    spaceEventOutstanding = false
                    announceToWriter(&launches)
                    announceToReader(&launches)
                    return count
                }
                waitingWriters += 1
                condition.wait()
                waitingWriters -= 1
                waited = true
            }
        }
    }

    var outputStatus: Stream.Status {
        locked { _ in
            switch output.phase {
            case .notOpen: .notOpen
            case .open: .open
            case .closed: .closed
            case .ended: .atEnd
            }
        }
    }

    var outputError: NSError? { locked { _ in output.error } }

    var hasSpaceAvailable: Bool { locked { _ in output.phase == .open && ring.freeSpace > 0 } }

    // MARK: For tests

    /// What the tests check: bytes held, and who is blocked.
    var snapshot: (count: Int, capacity: Int, waitingReaders: Int, waitingWriters: Int) {
        locked { _ in (ring.count, ring.capacity, waitingReaders, waitingWriters) }
    }

    // MARK: Events

    /// Tells the reader what changed, once per change (see the type's notes).
    private func announceToReader(_ launches: inout [BoundStreamEventLaunch]) {
        guard input.phase == .open else { return }
        if ring.count > 0 {
            guard !bytesEventOutstanding else { return }
            bytesEventOutstanding = true
            post(.hasBytesAvailable, to: inputEvents, &launches)
        } else if output.phase == .closed, !endEventSent {
            // A read would not block (it returns the end): say so, as for
            // bytes, for a reader that reads only on `.hasBytesAvailable`;
            // then the end itself.
            endEventSent = true
            if !endRead, !bytesEventOutstanding {
                bytesEventOutstanding = true
                post(.hasBytesAvailable, to: inputEvents, &launches)
            }
            post(.endEncountered, to: inputEvents, &launches)
        }
    }

    /// Tells the writer there is space, once per change.
    private func announceToWriter(_ launches: inout [BoundStreamEventLaunch]) {
        guard output.phase == .open, ring.freeSpace > 0, !spaceEventOutstanding else { return }
        spaceEventOutstanding = true
        post(.hasSpaceAvailable, to: outputEvents, &launches)
    }

    /// Queues the event now, under the lock, so events keep the order of
    /// the changes; its delivery starts after the lock is released.
    private func post(
        _ event: Stream.Event, to channel: BoundStreamEventChannel, _ launches: inout [BoundStreamEventLaunch]
    ) {
        if let launch = channel.enqueue(event) { launches.append(launch) }
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
