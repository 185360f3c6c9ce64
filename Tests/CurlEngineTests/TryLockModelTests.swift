import Foundation
import Synchronization
import Testing
import TestSupport

@testable import CurlEngine

/// The engine loop's ownership lock is taken with `withLock` by the engine
/// thread and with `withLockIfAvailable` by inline turns. Both must
/// exclude each other: each side increments the guarded counter without
/// atomics, and no increment may be lost. (Under ThreadSanitizer, with
/// the sanitizer-visible lock, this is also the smallest program that
/// shows how it models the trylock side.)
@Suite struct TryLockModelTests {
    @Test func withLockAndWithLockIfAvailable_excludeEachOther() async {
        let lock = Mutex<Int>(0)
        let rounds = 20_000
        let tried = Mutex<Int>(0)
        let other = Thread {
            for _ in 0..<rounds {
                if lock.withLockIfAvailable({ $0 += 1 }) != nil { tried.withLock { $0 += 1 } }
            }
        }
        other.start()
        for _ in 0..<rounds { lock.withLock { $0 += 1 } }
        // Bounded wait for the other thread's rounds.
        _ = try? await eventually { other.isFinished }
        #expect(other.isFinished)
        #expect(lock.withLock { $0 } == rounds + tried.withLock { $0 })
    }

    /// The same with nothing inside the lock, as the engine loop's
    /// ownership lock: it guards the loop's state by convention.
    @Test func emptyLock_withLockAndWithLockIfAvailable_excludeEachOther() async {
        let lock = Mutex<Void>(())
        // Touched only while `lock` is held: a plain box, no lock of its own.
        let inside = UnguardedCounter()
        let tried = Mutex<Int>(0)
        let rounds = 20_000
        let other = Thread {
            for _ in 0..<rounds where lock.withLockIfAvailable({ _ in inside.value += 1 }) != nil {
                tried.withLock { $0 += 1 }
            }
        }
        other.start()
        for _ in 0..<rounds { lock.withLock { _ in inside.value += 1 } }
        _ = try? await eventually { other.isFinished }
        #expect(other.isFinished)
        #expect(lock.withLock { _ in inside.value } == rounds + tried.withLock { $0 })
    }
}

/// A counter with no synchronization of its own, for the test above.
/// `@unchecked Sendable`: it is only touched while that test's lock is held.
private final class UnguardedCounter: @unchecked Sendable {
    var value = 0
}
