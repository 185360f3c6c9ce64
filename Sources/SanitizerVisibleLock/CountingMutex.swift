// A `Synchronization.Mutex` that counts its acquisitions, for the benchmark's
// count of lock acquisitions per request (`Benchmarks --count`, see
// Sources/Benchmarks/README.md).
//
// Built with `-DASYNCURLSESSION_COUNTING_LOCKS`, each module's `Mutex` name
// means this type instead (see `Mutex+Sanitizers.swift` in CurlEngine,
// AsyncURLSession, URLSessionCompat and AsyncURLSessionTesting). It is the
// same futex with one relaxed atomic increment in front, and like `Mutex` a
// noncopyable value stored in place, so the counting build allocates what
// the ordinary build allocates. Without the condition none of this is
// compiled: ordinary builds are unchanged.
#if ASYNCURLSESSION_COUNTING_LOCKS
import Synchronization

/// Every acquisition of every `CountingMutex` in the process.
private let acquisitions = Atomic<Int>(0)

/// Adds one to the process-wide count. Out of line: the counting build
/// measures how often locks are taken, not how fast.
@usableFromInline
func countLockAcquisition() {
    acquisitions.add(1, ordering: .relaxed)
}

/// The process-wide count of lock acquisitions so far.
public enum LockAcquisitionCounter {
    /// Acquisitions of every `CountingMutex` since the process started: each
    /// `withLock`, and each `withLockIfAvailable` that got the lock.
    public static var total: Int { acquisitions.load(ordering: .relaxed) }
}

/// The subset of `Synchronization.Mutex`'s API this project uses, counting
/// each acquisition in `LockAcquisitionCounter`.
public struct CountingMutex<Value: ~Copyable>: ~Copyable, Sendable {
    @usableFromInline
    let base: Mutex<Value>

    @inlinable
    public init(_ initialValue: consuming sending Value) {
        base = Mutex(initialValue)
    }

    @inlinable
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        countLockAcquisition()
        return try base.withLock(body)
    }

    /// Counted only when it gets the lock.
    @inlinable
    public borrowing func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        try base.withLockIfAvailable { (value: inout sending Value) throws(E) -> sending Result in
            countLockAcquisition()
            return try body(&value)
        }
    }
}
#endif
