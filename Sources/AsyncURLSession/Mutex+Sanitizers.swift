// With -DASYNCURLSESSION_SANITIZER_LOCKS (the sanitizer script in .ci), this
// module's `Mutex` is a pthread mutex ThreadSanitizer can see; with
// -DASYNCURLSESSION_COUNTING_LOCKS (the benchmark's count build), a
// `Synchronization.Mutex` that counts its acquisitions; otherwise it is
// `Synchronization.Mutex`. See SanitizerVisibleLock/PThreadMutex.swift and
// SanitizerVisibleLock/CountingMutex.swift.
#if ASYNCURLSESSION_SANITIZER_LOCKS
import SanitizerVisibleLock

typealias Mutex = PThreadMutex
#elseif ASYNCURLSESSION_COUNTING_LOCKS
import SanitizerVisibleLock

typealias Mutex = CountingMutex
#endif

#if ASYNCURLSESSION_COUNTING_LOCKS
/// The count build's tally of lock acquisitions, for the benchmark clients
/// (`Benchmarks --count`). Exists only in that build.
@_spi(Benchmarks)
public enum LockCounting {
    /// Acquisitions of every lock of CurlEngine, AsyncURLSession,
    /// URLSessionCompat and AsyncURLSessionTesting in this process so far.
    public static var acquisitions: Int { LockAcquisitionCounter.total }
}
#endif
