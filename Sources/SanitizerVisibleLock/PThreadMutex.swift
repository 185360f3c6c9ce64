// A stand-in for `Synchronization.Mutex` that ThreadSanitizer can see.
//
// On Linux, `Mutex` is a raw futex that TSan does not model, so every
// hand-off through it looks like a data race (372 reports on the whole test
// suite). Built with `-DASYNCURLSESSION_SANITIZER_LOCKS`, each module's
// `Mutex` name means this type instead (see `Mutex+Sanitizers.swift` in
// CurlEngine, AsyncURLSession and URLSessionCompat), a pthread mutex that
// TSan intercepts, and the reports that remain are real. Never used in
// ordinary builds: it is slower than the futex.
#if canImport(Glibc)
import Glibc
#endif

/// The subset of `Synchronization.Mutex`'s API this project uses.
public final class PThreadMutex<Value: ~Copyable>: @unchecked Sendable {
    // @unchecked: the value is only touched between pthread_mutex_lock and
    // pthread_mutex_unlock on `mutex`, which lives at a fixed address.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    // The value lives behind a pointer, not in a stored property: with an
    // empty value (`Mutex<Void>`, the engine loop's ownership lock) Swift's
    // exclusivity instrumentation reported the property's accesses to TSan
    // as racing even inside the lock (Tests/CurlEngineTests/TryLockModelTests).
    private let storage: UnsafeMutablePointer<Value>

    public init(_ initialValue: consuming sending Value) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: initialValue)
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&storage.pointee)
    }

    public func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&storage.pointee)
    }
}
