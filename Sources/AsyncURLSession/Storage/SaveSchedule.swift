import Foundation
import Synchronization

/// When a store kept on disk writes its file: once, about a second after
/// the first change of a burst (a response that sets ten cookies writes
/// once), or at once on `flush()`.
final class SaveSchedule: Sendable {
    static let delay = 1.0
    private let due = Atomic<Bool>(false)

    /// After a change: `write` runs about a second from now, unless a write
    /// is due already (it will include this change) or ran meanwhile.
    func request(_ write: @escaping @Sendable () -> Void) {
        guard due.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return
        }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + Self.delay) { [self] in
            if due.load(ordering: .acquiring) { write() }
        }
    }

    /// A write is starting now: it takes every change so far.
    func writing() {
        due.store(false, ordering: .releasing)
    }
}
