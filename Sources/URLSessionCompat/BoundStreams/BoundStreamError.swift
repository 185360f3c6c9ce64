#if canImport(FoundationNetworking)
import Foundation

// What a bound stream pair reports in `streamError`.
//
// NSErrors in the POSIX domain, as CFStream reports the failures of its own
// streams, with the errno that names each case, so code that logs or
// compares `(domain, code)` sees familiar values.
enum BoundStreamError {
    /// Reading or writing a stream that is not open (never opened, or closed).
    static func notOpen() -> NSError {
        make(EBADF, "The bound stream is not open.")
    }

    /// The stream was closed (from another thread) while a read or write waited.
    static func closedWhileWaiting() -> NSError {
        make(ECANCELED, "The bound stream was closed while a read or write waited on it.")
    }

    /// A negative `maxLength`.
    static func invalidLength() -> NSError {
        make(EINVAL, "maxLength must not be negative.")
    }

    private static func make(_ code: Int32, _ description: String) -> NSError {
        NSError(domain: NSPOSIXErrorDomain, code: Int(code), userInfo: [NSLocalizedDescriptionKey: description])
    }
}
#endif
