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
