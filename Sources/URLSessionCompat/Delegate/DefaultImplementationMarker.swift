#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells whether a delegate implements an optional method.
///
/// URLSession asks `respondsToSelector:` to choose between the session-level
/// and the task-level challenge method, or between a task's own delegate and
/// the session's. Swift on Linux has no such question, so every default
/// implementation in this module raises a flag on the calling thread, and the
/// caller (which runs the delegate method synchronously on that thread)
/// checks it right after the call: raised means "not implemented".
enum DefaultImplementationMarker {
    // A thread-specific slot: the delegate method runs on whatever thread the
    // delegate queue picks, and the check happens on that same thread.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Any non-nil pointer means raised; the value is never dereferenced.
    private static var raised: UnsafeMutableRawPointer? { UnsafeMutableRawPointer(bitPattern: 1) }

    /// Called by the default implementations.
    static func raise() {
        pthread_setspecific(key, raised)
    }

    /// Runs `call` and tells whether it ended in a default implementation.
    static func ranDefault(_ call: () -> Void) -> Bool {
        pthread_setspecific(key, nil)
        call()
        let wasRaised = pthread_getspecific(key) != nil
        pthread_setspecific(key, nil)
        return wasRaised
    }
}
