// AsyncURLSession: URLSession's model, async/await first, on libcurl.
//
// Threading: `Session` is an actor for its control plane; task creation,
// the task table and body bytes use locks and the engine thread instead of
// actor hops (see SessionContext and TaskCore for why). All public types are
// Sendable.
//
// Ownership: a session owns one engine session (one libcurl multi handle, one
// connection pool). Tasks keep their session's pool alive until they finish.
//
// Errors: tasks fail with `URLError`, with the codes URLSession uses.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A set of tasks sharing a configuration and a connection pool, as
/// `URLSession`.
public actor Session {
    /// A session with the default configuration. It cannot be invalidated.
    public static let shared = Session(context: SessionContext(configuration: .default, delegate: nil, isShared: true))

    nonisolated let context: SessionContext

    /// A copy of the configuration the session was created with.
    public nonisolated var configuration: SessionConfiguration { context.configuration }

    /// The configuration is copied: changing yours afterwards changes nothing
    /// here. The delegate answers decisions (redirects, challenges, responses)
    /// of every task that its own delegate leaves unanswered.
    public init(configuration: SessionConfiguration = .default, delegate: (any SessionTaskDelegate)? = nil) {
        self.init(context: SessionContext(configuration: configuration, delegate: delegate, isShared: false))
    }

    /// The session-level decision handler.
    public nonisolated var delegate: (any SessionTaskDelegate)? { context.delegate }

    private init(context: SessionContext) {
        self.context = context
    }

    // MARK: - Task factories

    /// A data task for the request. It starts suspended: call `resume()`.
    /// Invalid requests (bad scheme, CR/LF in a header, ...) produce a task
    /// that fails with a `URLError` naming the problem, before anything is sent.
    /// - Parameter delegate: answers this task's decisions before the session's delegate.
    public nonisolated func dataTask(
        with request: URLRequest, delegate: (any SessionTaskDelegate)? = nil
    ) -> SessionTask {
        if let core = context.register({
            TaskCore(identifier: $0, context: context, request: request, delegate: delegate)
        }) {
            return SessionTask(core: core)
        }
        // Invalidated: a task that fails at once with a clear error.
        let core = TaskCore(
            identifier: context.nextRefusedIdentifier(), context: context, request: request, delegate: delegate,
            refused: true)
        return SessionTask(core: core)
    }

    public nonisolated func dataTask(with url: URL, delegate: (any SessionTaskDelegate)? = nil) -> SessionTask {
        dataTask(with: URLRequest(url: url), delegate: delegate)
    }

    // MARK: - Credentials

    /// Remembers a credential for a protection space: challenges for it are
    /// answered with it by default.
    public nonisolated func setCredential(_ credential: URLCredential, for space: URLProtectionSpace) {
        context.credentials.set(credential, for: space)
    }

    public nonisolated func credential(for space: URLProtectionSpace) -> URLCredential? {
        context.credentials.credential(for: space)
    }

    // MARK: - Invalidation

    /// Running tasks finish; new tasks are refused. Does nothing on `shared`.
    public nonisolated func finishTasksAndInvalidate() {
        context.finishTasksAndInvalidate()
    }

    /// Cancels running tasks; new tasks are refused. Does nothing on `shared`.
    public nonisolated func invalidateAndCancel() {
        context.invalidateAndCancel()
    }

    /// The tasks not yet completed.
    public nonisolated var tasksInProgress: Int {
        context.liveTasks.count
    }
}
