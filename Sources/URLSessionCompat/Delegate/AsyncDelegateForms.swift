import Synchronization

/// Delegates written for Apple's platforms often implement the async form of
/// a method (`urlSession(_:needNewBodyStreamForTask:) async -> InputStream?`)
/// instead of its completion-handler form. Apple calls whichever the class
/// has; so does the adapter: when the completion-handler form ran its default
/// implementation, the async form is asked next, in a task of its own (as
/// Apple's async delegate methods run).
///
/// Whether the async form is the delegate's own is learned the way
/// `DefaultImplementationMarker` learns it for the others: its default
/// implementation raises a flag, here a task-local one (the call is async).
/// What was learned is kept per class and method (a class's methods never
/// change), so a delegate that implements neither form is called in its
/// async form once per class, not once per task.
enum AsyncDelegateForms {
    /// The methods that have an async form.
    enum Method: Hashable, Sendable {
        case sessionChallenge, taskChallenge, redirect, bodyStream, response, willCache
    }

    /// Raised by a default implementation of an async form.
    final class DefaultFlag: Sendable {
        private let raised = Atomic<Bool>(false)
        var isRaised: Bool { raised.load(ordering: .acquiring) }
        func raise() { raised.store(true, ordering: .releasing) }
    }

    @TaskLocal static var current: DefaultFlag?

    /// Called by the default implementations of the async forms.
    static func raiseDefault() {
        current?.raise()
    }

    private struct Key: Hashable {
        let type: ObjectIdentifier
        let method: Method
    }

    private static let known = Mutex<[Key: Bool]>([:])

    /// False when `delegate`'s class is known not to implement `method`'s
    /// async form; true when it is known to, or not yet known.
    static func mayImplement(_ delegate: AnyObject, _ method: Method) -> Bool {
        known.withLock { $0[Key(type: ObjectIdentifier(type(of: delegate)), method: method)] } ?? true
    }

    /// Runs `call` (an async form) and tells whether it was the delegate's
    /// own; remembers the answer for the delegate's class.
    static func call<Answer>(
        _ delegate: AnyObject, _ method: Method, _ call: () async -> Answer
    ) async -> Answer? {
        let flag = DefaultFlag()
        let answer = await $current.withValue(flag) { await call() }
        let implemented = !flag.isRaised
        known.withLock { $0[Key(type: ObjectIdentifier(type(of: delegate)), method: method)] = implemented }
        return implemented ? answer : nil
    }
}
