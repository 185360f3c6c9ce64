import Foundation
import Synchronization

/// When a store kept on disk writes its file: once, about a second after
/// the first change of a burst (a response that sets ten cookies writes
/// once), at once on `flush()`, and at the latest when the program exits
/// normally (`PendingSaves`), so that a command-line program that ends right
/// after a response loses none of what the response set.
final class SaveSchedule: Sendable {
    static let delay = 1.0
    private let due = Atomic<Bool>(false)

    /// After a change: `write` runs about a second from now, unless a write
    /// is due already (it will include this change) or ran meanwhile; and at
    /// exit if it has not run by then.
    func request(_ write: @escaping @Sendable () -> Void) {
        guard due.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return
        }
        PendingSaves.add(ObjectIdentifier(self), write)
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + Self.delay) { [self] in
            if due.load(ordering: .acquiring) { write() }
        }
    }

    /// A write is starting now: it takes every change so far.
    func writing() {
        due.store(false, ordering: .releasing)
        PendingSaves.remove(ObjectIdentifier(self))
    }
}

/// The writes that are due and have not run, carried out by an `atexit`
/// handler: a program that returns from `main` or calls `exit` writes them
/// before it ends. (A crash or a kill cannot; the delay is a second.)
/// One lock per burst of changes, none per request.
enum PendingSaves {
    private static let writes = Mutex<[ObjectIdentifier: @Sendable () -> Void]>([:])
    private static let registered: Void = {
        atexit { PendingSaves.runAll() }
    }()

    static func add(_ owner: ObjectIdentifier, _ write: @escaping @Sendable () -> Void) {
        _ = registered
        writes.withLock { $0[owner] = write }
    }

    static func remove(_ owner: ObjectIdentifier) {
        writes.withLock { _ = $0.removeValue(forKey: owner) }
    }

    /// Runs every due write now, on this thread. Each write takes itself out
    /// (`SaveSchedule.writing`), so none runs twice.
    static func runAll() {
        let due = writes.withLock { Array($0.values) }
        for write in due { write() }
    }
}
