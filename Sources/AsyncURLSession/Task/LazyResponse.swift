import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A response made at most once and then shared, read without a lock: one
/// atomic word holding a retained reference (0 while unset). Each small
/// request reads its response two to four times (the consumer, the
/// metrics, a decision); a lock around an optional cost two acquisitions
/// for the first read alone (look, then store). A noncopyable value, stored
/// inline in its `ResponseSource`: as a class of its own it was one more
/// allocation per response.
struct LazyResponse: ~Copyable, Sendable {
    /// `Unmanaged<HTTPURLResponse>`'s bit pattern, retained; 0 while unset.
    private let stored: Atomic<UInt>

    init(_ response: HTTPURLResponse? = nil) {
        stored = Atomic(response.map { UInt(bitPattern: Unmanaged.passRetained($0).toOpaque()) } ?? 0)
    }

    deinit {
        let bits = stored.load(ordering: .acquiring)
        if let pointer = UnsafeRawPointer(bitPattern: bits) {
            Unmanaged<HTTPURLResponse>.fromOpaque(pointer).release()
        }
    }

    /// The response, if one was stored.
    var value: HTTPURLResponse? {
        let bits = stored.load(ordering: .acquiring)
        guard let pointer = UnsafeRawPointer(bitPattern: bits) else { return nil }
        return Unmanaged<HTTPURLResponse>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Stores `made` unless another thread stored one first; returns the one
    /// every reader gets.
    func store(_ made: HTTPURLResponse) -> HTTPURLResponse {
        let retained = Unmanaged.passRetained(made)
        let bits = UInt(bitPattern: retained.toOpaque())
        let (exchanged, original) = stored.compareExchange(
            expected: 0, desired: bits, successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
        if exchanged { return made }
        retained.release()
        // Nonzero: the other thread's response, retained by this object.
        return Unmanaged<HTTPURLResponse>.fromOpaque(UnsafeRawPointer(bitPattern: original)!).takeUnretainedValue()
    }
}
