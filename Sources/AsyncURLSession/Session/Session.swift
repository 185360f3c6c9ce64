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
    ///
    /// A background configuration (`SessionConfiguration.background(identifier:)`)
    /// attaches to the transfer agent here, starting it when none runs (a
    /// few milliseconds; bounded: 5 s for a new agent to listen, 15 s for its
    /// answer): the tasks an earlier program left come as `backgroundEvents`.
    public init(configuration: SessionConfiguration = .default, delegate: (any SessionTaskDelegate)? = nil) {
        self.init(context: SessionContext(configuration: configuration, delegate: delegate, isShared: false))
        if context.background != nil { reconnectBackgroundTasks() }
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
    /// - Parameters:
    ///   - request: what to send.
    ///   - delegate: answers this task's decisions before the session's delegate.
    public nonisolated func dataTask(
        with request: URLRequest, delegate: (any SessionTaskDelegate)? = nil
    ) -> SessionTask {
        makeTask(request, kind: .data, upload: .none, delegate: delegate)
    }

    public nonisolated func dataTask(with url: URL, delegate: (any SessionTaskDelegate)? = nil) -> SessionTask {
        dataTask(with: URLRequest(url: url), delegate: delegate)
    }

    /// An upload of `bodyData`. The method is the request's (GET becomes
    /// POST); Content-Length comes from the data.
    public nonisolated func uploadTask(
        with request: URLRequest, from bodyData: Data, delegate: (any SessionTaskDelegate)? = nil
    ) -> SessionTask {
        makeTask(Self.uploadRequest(request), kind: .upload, upload: .data(bodyData), delegate: delegate)
    }

    /// An upload read from disk as it is sent, never loaded whole. A file that
    /// does not exist or cannot be read fails the task before anything is sent
    /// (`.fileDoesNotExist`, `.noPermissionsToReadFile`).
    public nonisolated func uploadTask(
        with request: URLRequest, fromFile fileURL: URL, delegate: (any SessionTaskDelegate)? = nil
    ) -> SessionTask {
        makeTask(Self.uploadRequest(request), kind: .upload, upload: .file(fileURL), delegate: delegate)
    }

    /// An upload whose body is asked for with a `needBodyStream` event (or a
    /// handler's `task(_:needsBodyStream:)`), at start and on every re-send.
    /// Sent chunked unless the request has a Content-Length.
    public nonisolated func uploadTask(
        withStreamedRequest request: URLRequest, delegate: (any SessionTaskDelegate)? = nil
    ) -> SessionTask {
        makeTask(Self.uploadRequest(request), kind: .upload, upload: .streamed, delegate: delegate)
    }

    /// A download: the body goes to a file in `configuration.downloadDirectory`
    /// (never held in memory); `downloadProgress` events, then `downloaded(URL)`.
    public nonisolated func downloadTask(
        with request: URLRequest, delegate: (any SessionTaskDelegate)? = nil
    ) -> SessionTask {
        makeTask(request, kind: .download, upload: .none, delegate: delegate)
    }

    public nonisolated func downloadTask(with url: URL, delegate: (any SessionTaskDelegate)? = nil) -> SessionTask {
        downloadTask(with: URLRequest(url: url), delegate: delegate)
    }

    /// Continues a download from resume data (`cancelByProducingResumeData`,
    /// or a failed download's `URLError.downloadTaskResumeData`). Invalid
    /// resume data gives a task that fails with a clear error when resumed.
    public nonisolated func downloadTask(
        withResumeData resumeData: Data, delegate: (any SessionTaskDelegate)? = nil
    ) -> SessionTask {
        switch ResumeData.decode(resumeData) {
        case .success(let decoded):
            if let request = decoded.request() {
                return makeTask(request, kind: .download, upload: .none, delegate: delegate, resumeFrom: decoded)
            }
            return makeTask(
                Self.placeholderRequest, kind: .download, upload: .none, delegate: delegate,
                refusal: URLError(.cannotDecodeRawData, userInfo: [NSLocalizedDescriptionKey: "Invalid resume data."]))
        case .failure(let error):
            return makeTask(Self.placeholderRequest, kind: .download, upload: .none, delegate: delegate, refusal: error)
        }
    }

    /// A task that sends nothing and fails with `error` when resumed, as the
    /// session's own refusals do (an invalid request, bad resume data): for
    /// code that offers tasks over a session and must refuse one the session
    /// would accept (the classic adapter refuses completion handlers in
    /// background sessions, as Apple does). A data task, or a download task
    /// with `download`.
    public nonisolated func refusedTask(for request: URLRequest, download: Bool = false, error: URLError) -> SessionTask {
        makeTask(request, kind: download ? .download : .data, upload: .none, delegate: nil, refusal: error)
    }

    private static var placeholderRequest: URLRequest { URLRequest(url: URL(fileURLWithPath: "/")) }

    nonisolated func makeTask(
        _ request: URLRequest, kind: TaskKind, upload: UploadSource, delegate: (any SessionTaskDelegate)?,
        resumeFrom: ResumeData? = nil, refusal: URLError? = nil
    ) -> SessionTask {
        if let core = context.register({
            TaskCore(
                identifier: $0, context: context, request: request, delegate: delegate, kind: kind, upload: upload,
                resumeFrom: resumeFrom, refusal: refusal)
        }) {
            let task = SessionTask(core: core)
            context.background?.hold(task)
            return task
        }
        // Invalidated: a task that fails at once with a clear error.
        let invalidated = URLError(.cancelled, userInfo: [
            NSLocalizedDescriptionKey: "The session was invalidated; create a new Session for new tasks.",
        ])
        let core = TaskCore(
            identifier: context.nextRefusedIdentifier(), context: context, request: request, delegate: delegate,
            kind: kind, upload: upload, refusal: invalidated)
        return SessionTask(core: core)
    }

    /// Upload tasks send a body; a GET with a body is not what anyone means.
    private static func uploadRequest(_ request: URLRequest) -> URLRequest {
        var request = request
        if (request.httpMethod ?? "GET").uppercased() == "GET" { request.httpMethod = "POST" }
        request.httpBody = nil
        request.httpBodyStream = nil
        return request
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

    /// Forgets the session's stored credentials and empties its cookie jar
    /// and credential storage (for a default session those are the shared
    /// ones, as Apple's reset empties the shared storage), as
    /// `URLSession.reset` (there is no
    /// response cache yet). Connections stay open: libcurl offers no way to
    /// close idle ones short of closing the pool.
    public func reset() {
        context.credentials.removeAll()
        context.configuration.cookieJar?.removeAll()
        context.configuration.credentialStorage?.removeAll()
        context.configuration.responseCache?.removeAllCachedResponses()
        flush()
    }

    /// Writes what the session keeps on disk (its cookie jar's and
    /// credential storage's files, its response cache's database) now, as
    /// `URLSession.flush`.
    public func flush() {
        context.configuration.cookieJar?.flush()
        context.configuration.credentialStorage?.flush()
        context.configuration.responseCache?.flush()
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
