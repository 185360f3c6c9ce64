// With -DASYNCURLSESSION_SANITIZER_LOCKS (the sanitizer script in .ci), this
// module's `Mutex` is a pthread mutex ThreadSanitizer can see; otherwise it
// is `Synchronization.Mutex`. See SanitizerVisibleLock/PThreadMutex.swift.
#if ASYNCURLSESSION_SANITIZER_LOCKS
import SanitizerVisibleLock

typealias Mutex = PThreadMutex
#endif
