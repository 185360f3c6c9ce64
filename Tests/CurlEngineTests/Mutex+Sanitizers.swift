// This test module imports a module of ours with `@testable`, which shows
// that module's `Mutex` alias (see its Mutex+Sanitizers.swift) beside
// Synchronization's: in sanitizer builds the name is declared here too, so
// it resolves to the lock ThreadSanitizer can see.
#if ASYNCURLSESSION_SANITIZER_LOCKS
import SanitizerVisibleLock

typealias Mutex = PThreadMutex
#endif
