import Foundation
import Synchronization
import TestSupport
import URLSessionCompat

/// How a legacy delegate calls a completion handler it is given.
enum AnswerStyle: Sendable, CaseIterable, CustomStringConvertible {
    /// Inside the delegate method, before it returns.
    case synchronously
    /// From another thread, while the delegate method may still run.
    case fromAnotherThread
    /// From another thread, 20 ms after the method returned.
    case afterADelay

    var description: String {
        switch self {
        case .synchronously: return "synchronously"
        case .fromAnotherThread: return "from another thread"
        case .afterADelay: return "after a delay"
        }
    }

    func answer(_ body: @escaping @Sendable () -> Void) {
        switch self {
        case .synchronously: body()
        case .fromAnotherThread: DispatchQueue.global().async(execute: body)
        case .afterADelay: DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20), execute: body)
        }
    }
}

/// A delegate written the way legacy code writes them: an `NSObject` that
/// implements every method of every classic delegate protocol, records what
/// it was told, and answers every question in one `AnswerStyle`.
final class LegacyDelegate: NSObject, URLSessionDataDelegate, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: the configuration is immutable; everything recorded is
    // behind `state`'s lock.
    let style: AnswerStyle
    let responseDisposition: URLSession.ResponseDisposition
    let credential: URLCredential?
    let bodyStream: (@Sendable () -> InputStream?)?
    /// The answer to `willCacheResponse`: the proposed response, or nil.
    let storesResponses: Bool

    /// Fires once per `didCompleteWithError`.
    let completed = Signal()
    /// Fires once per `didBecomeInvalidWithError`.
    let invalidated = Signal()
    private let state = Mutex(State())

    struct State {
        var calls: [String] = []
        var body = Data()
        var error: (any Error)?
        var challenges: [URLAuthenticationChallenge] = []
        var downloaded: Data?
        var created: [Int] = []
        var informational: [Int] = []
        var metrics: URLSessionTaskMetrics?
    }

    init(
        style: AnswerStyle = .synchronously, response: URLSession.ResponseDisposition = .allow,
        credential: URLCredential? = nil, bodyStream: (@Sendable () -> InputStream?)? = nil,
        storesResponses: Bool = true
    ) {
        self.style = style
        self.storesResponses = storesResponses
        self.responseDisposition = response
        self.credential = credential
        self.bodyStream = bodyStream
    }

    var calls: [String] { state.withLock { $0.calls } }
    var body: Data { state.withLock { $0.body } }
    var error: (any Error)? { state.withLock { $0.error } }
    var challenges: [URLAuthenticationChallenge] { state.withLock { $0.challenges } }
    var downloaded: Data? { state.withLock { $0.downloaded } }
    var createdTasks: [Int] { state.withLock { $0.created } }
    var informationalStatuses: [Int] { state.withLock { $0.informational } }
    var metrics: URLSessionTaskMetrics? { state.withLock { $0.metrics } }

    private func record(_ call: String, _ extra: (inout State) -> Void = { _ in }) {
        state.withLock { state in
            state.calls.append(call)
            extra(&state)
        }
    }

    // MARK: URLSessionDelegate

    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        record("invalid")
        invalidated.fire()
    }

    // MARK: URLSessionTaskDelegate

    func urlSession(_ session: URLSession, didCreateTask task: URLSessionTask) {
        record("create") { $0.created.append(task.taskIdentifier) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        record("redirect")
        style.answer { completionHandler(request) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        record("challenge") { $0.challenges.append(challenge) }
        let credential = credential
        style.answer {
            if let credential, challenge.previousFailureCount < 2 {
                completionHandler(.useCredential, credential)
            } else {
                completionHandler(.performDefaultHandling, nil)
            }
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask,
        needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        record("needNewBodyStream")
        let stream = StreamHandOver(stream: bodyStream?())
        style.answer { completionHandler(stream.stream) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        record("send")
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceiveInformationalResponse response: HTTPURLResponse
    ) {
        record("informational \(response.statusCode)") { $0.informational.append(response.statusCode) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        record("metrics") { $0.metrics = metrics }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        record("complete") { $0.error = error }
        completed.fire()
    }

    // MARK: URLSessionDataDelegate

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        record("response")
        let disposition = responseDisposition
        style.answer { completionHandler(disposition) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        record("data") { $0.body.append(data) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didBecome downloadTask: URLSessionDownloadTask) {
        record("becomeDownload")
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
        completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void
    ) {
        record("willCache")
        let store = storesResponses
        let proposed = CachedResponseHandOver(response: proposedResponse)
        style.answer { completionHandler(store ? proposed.response : nil) }
    }

    // MARK: URLSessionDownloadDelegate

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let contents = try? Data(contentsOf: location)
        record("finishDownloading") { $0.downloaded = contents }
    }

    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {
        record("write")
    }

    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
        expectedTotalBytes: Int64
    ) {
        record("resume")
    }
}

/// An `InputStream` handed from the delegate to its completion handler,
/// which may run on another thread. Safe: the delegate never touches the
/// stream again after handing it over.
struct StreamHandOver: @unchecked Sendable {
    let stream: InputStream?
}

/// A `CachedURLResponse` handed to a completion handler that may run on
/// another thread. Safe: Foundation's CachedURLResponse is never changed
/// after it is made.
struct CachedResponseHandOver: @unchecked Sendable {
    let response: CachedURLResponse
}

/// What a completion handler was called with, for a test to await.
final class HandlerResult<Value: Sendable>: Sendable {
    private let state = Mutex<(result: (Value?, URLResponse?, (any Error)?)?, waiter: CheckedContinuation<Void, Never>?)>((nil, nil))
    let calls = Mutex(0)

    func set(_ value: Value?, _ response: URLResponse?, _ error: (any Error)?) {
        calls.withLock { $0 += 1 }
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.result == nil else { return nil }
            state.result = (value, response, error)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func value() async -> (Value?, URLResponse?, (any Error)?) {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.result != nil { return true }
                state.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
        return state.withLock { $0.result! }
    }
}

/// An ephemeral configuration with an idle timeout short enough that a
/// stalled test fails instead of waiting for the default 60 s.
func legacyConfiguration() -> URLSessionConfiguration {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = scaledTimeout(15)
    return configuration
}
