import Foundation

/// The delegate queue of a session made without one: serial, running on a
/// serial dispatch queue of its own (why: `URLSession.serialQueue()`).
///
/// A subclass because corelibs' `underlyingQueue` is `unowned(unsafe)`: the
/// queue must keep its dispatch queue alive itself, for as long as anyone
/// holds it (a caller may keep `session.delegateQueue` past the session).
final class SerialDelegateOperationQueue: OperationQueue, @unchecked Sendable {
    // @unchecked Sendable, restated as Swift requires of a subclass:
    // OperationQueue is `@unchecked Sendable` (it locks its own state), and
    // the one property added here is a `let` of a Sendable type.
    private let backing = DispatchQueue(label: "URLSessionCompat delegate queue")

    override init() {
        super.init()
        maxConcurrentOperationCount = 1
        name = "URLSessionCompat delegate queue"
        underlyingQueue = backing
    }
}
