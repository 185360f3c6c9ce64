import Foundation
import Synchronization
import TestSupport
import URLSessionCompat

/// A delegate as legacy code writes them: it implements every method, records
/// each call as "name" (or "name detail") per task, and answers questions as
/// configured. It also notices calls for one task that overlap.
final class RecordingDelegate: NSObject, URLSessionDataDelegate, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: the answers are immutable closures and values; everything
    // recorded is behind `state`'s lock.
    typealias ChallengeAnswer = (URLSession.AuthChallengeDisposition, URLCredential?)

    let redirectAnswer: @Sendable (HTTPURLResponse, URLRequest) -> URLRequest?
    let responseAnswer: URLSession.ResponseDisposition
    let challengeAnswer: @Sendable (URLAuthenticationChallenge) -> ChallengeAnswer
    let sessionChallengeAnswer: (@Sendable (URLAuthenticationChallenge) -> ChallengeAnswer)?
    let bodyStream: (@Sendable () -> InputStream?)?

    let completed = Signal()
    let invalidated = Signal()
    private let state = Mutex(State())

    struct State {
        var calls: [Int: [String]] = [:]
        var body: [Int: Data] = [:]
        var inCall: Set<Int> = []
        var overlapped = false
        var errors: [Int: any Error] = [:]
        var metrics: [Int: URLSessionTaskMetrics] = [:]
        var downloaded: [Int: Data] = [:]
        var downloadedLocation: URL?
        var sent: [(Int64, Int64, Int64)] = []
        var written: [(Int64, Int64, Int64)] = []
        var becameDownload: URLSessionDownloadTask?
    }

    init(
        redirect: @escaping @Sendable (HTTPURLResponse, URLRequest) -> URLRequest? = { $1 },
        response: URLSession.ResponseDisposition = .allow,
        challenge: @escaping @Sendable (URLAuthenticationChallenge) -> ChallengeAnswer = { _ in
            (.performDefaultHandling, nil)
        },
        sessionChallenge: (@Sendable (URLAuthenticationChallenge) -> ChallengeAnswer)? = nil,
        bodyStream: (@Sendable () -> InputStream?)? = nil
    ) {
        redirectAnswer = redirect
        responseAnswer = response
        challengeAnswer = challenge
        sessionChallengeAnswer = sessionChallenge
        self.bodyStream = bodyStream
    }

    // MARK: - What was recorded

    func calls(_ task: URLSessionTask) -> [String] { callsForIdentifier(task.taskIdentifier) }
    func callsForIdentifier(_ id: Int) -> [String] { state.withLock { $0.calls[id] ?? [] } }
    /// Session-level calls (recorded under -1).
    var sessionCalls: [String] { callsForIdentifier(-1) }
    func body(_ task: URLSessionTask) -> Data { state.withLock { $0.body[task.taskIdentifier] ?? Data() } }
    func error(_ task: URLSessionTask) -> (any Error)? { state.withLock { $0.errors[task.taskIdentifier] } }
    func metrics(_ task: URLSessionTask) -> URLSessionTaskMetrics? { state.withLock { $0.metrics[task.taskIdentifier] } }
    func downloaded(_ task: URLSessionTask) -> Data? { state.withLock { $0.downloaded[task.taskIdentifier] } }
    var downloadedLocation: URL? { state.withLock { $0.downloadedLocation } }
    var overlapped: Bool { state.withLock { $0.overlapped } }
    var sent: [(Int64, Int64, Int64)] { state.withLock { $0.sent } }
    var written: [(Int64, Int64, Int64)] { state.withLock { $0.written } }
    var becameDownload: URLSessionDownloadTask? { state.withLock { $0.becameDownload } }

    /// Records a call; the pause widens the window in which an overlapping
    /// call for the same task would be caught.
    private func record(_ task: URLSessionTask, _ name: String, _ extra: (inout State) -> Void = { _ in }) {
        let id = task.taskIdentifier
        state.withLock { state in
            if state.inCall.contains(id) { state.overlapped = true }
            state.inCall.insert(id)
            state.calls[id, default: []].append(name)
            extra(&state)
        }
        usleep(200)
        _ = state.withLock { $0.inCall.remove(id) }
    }

    // MARK: - URLSessionDelegate

    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        invalidated.fire()
    }

    func urlSession(
        _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let answer = sessionChallengeAnswer?(challenge) ?? (.performDefaultHandling, nil)
        state.withLock { $0.calls[-1, default: []].append("session challenge \(challenge.protectionSpace.authenticationMethod)") }
        completionHandler(answer.0, answer.1)
    }

    // MARK: - URLSessionTaskDelegate

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        record(task, "redirect \(response.statusCode)")
        completionHandler(redirectAnswer(response, request))
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        record(task, "challenge \(challenge.protectionSpace.authenticationMethod) \(challenge.previousFailureCount)")
        let answer = challengeAnswer(challenge)
        completionHandler(answer.0, answer.1)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask,
        needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        record(task, "needNewBodyStream")
        let stream = bodyStream?()
        completionHandler(stream)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        record(task, "send") { $0.sent.append((bytesSent, totalBytesSent, totalBytesExpectedToSend)) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        record(task, "metrics") { $0.metrics[task.taskIdentifier] = metrics }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        record(task, "complete") { $0.errors[task.taskIdentifier] = error }
        completed.fire()
    }

    // MARK: - URLSessionDataDelegate

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        record(dataTask, "response")
        completionHandler(responseAnswer)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didBecome downloadTask: URLSessionDownloadTask) {
        record(dataTask, "becomeDownload") { $0.becameDownload = downloadTask }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        record(dataTask, "data") { $0.body[dataTask.taskIdentifier, default: Data()].append(data) }
    }

    // MARK: - URLSessionDownloadDelegate

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let contents = try? Data(contentsOf: location)
        record(downloadTask, "finishDownloading") {
            $0.downloaded[downloadTask.taskIdentifier] = contents
            $0.downloadedLocation = location
        }
    }

    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {
        record(downloadTask, "write") { $0.written.append((bytesWritten, totalBytesWritten, totalBytesExpectedToWrite)) }
    }

    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
        expectedTotalBytes: Int64
    ) {
        record(downloadTask, "resume \(fileOffset)")
    }
}

/// The calls with repeats of data/send/write folded into one, so orders can
/// be compared whatever the chunking.
func folded(_ calls: [String]) -> [String] {
    var result: [String] = []
    for call in calls where !(["data", "send", "write"].contains(call) && result.last == call) {
        result.append(call)
    }
    return result
}

/// A session for tests: ephemeral, short idle timeout, the delegate given.
func makeSession(
    _ delegate: (any URLSessionDelegate)?, queue: OperationQueue? = nil, configure: (URLSessionConfiguration) -> Void = { _ in }
) -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = scaledTimeout(20)
    configure(configuration)
    return URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
}
