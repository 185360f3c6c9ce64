import Foundation
import LoopbackServer
import Testing
import TestSupport
import Synchronization
import URLSessionCompat

/// Rules of Apple's classic API that legacy code reads back: error keys,
/// challenge fields, what an empty body means, task lists, TLS error codes.
@Suite struct ContractTests {
    @Test func taskError_carriesTheFailingURLAndItsString() async throws {
        // A port nobody listens on, held so no other test's server takes it.
        let reservation = try PortReservation()
        defer { reservation.release() }
        let url = URL(string: "http://127.0.0.1:\(reservation.port)/bytes/1")!
        let result = HandlerResult<Data>()
        URLSession(configuration: legacyConfiguration()).dataTask(with: url) { result.set($0, $1, $2) }.resume()
        let (_, _, error) = try await withTimeLimit(30) { await result.value() }
        let urlError = try #require(error as? URLError)
        #expect(urlError.code == .cannotConnectToHost)
        #expect(failingURLString(urlError) == url.absoluteString)
        #expect(urlError.failingURL == url)
        #expect((error as NSError?)?.userInfo[NSURLErrorFailingURLErrorKey] as? URL == url)
    }

    @Test func cancelledTaskError_carriesTheFailingURLString() async throws {
        try await withServer { server in
            let delegate = LegacyDelegate()
            let url = server.url("/stall/100?after=10")
            let task = URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .dataTask(with: url)
            task.resume()
            task.cancel()
            await delegate.completed.wait()
            let error = try #require(delegate.error as? URLError)
            #expect(error.code == .cancelled)
            #expect(failingURLString(error) == url.absoluteString)
            #expect(error.failingURL == url)
        }
    }

    @Test func challengeAfterAFailure_proposesTheCredentialThatFailed() async throws {
        try await withServer { server in
            let wrong = URLCredential(user: "someone", password: "wrong", persistence: .none)
            let delegate = LegacyDelegate(credential: wrong)
            URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .dataTask(with: server.url("/auth/basic?user=u&password=p")).resume()
            await delegate.completed.wait()
            let challenges = delegate.challenges
            try #require(challenges.count >= 2)
            #expect(challenges[0].previousFailureCount == 0)
            #expect(challenges[0].proposedCredential == nil)
            #expect(challenges[1].previousFailureCount == 1)
            #expect(challenges[1].proposedCredential?.user == "someone")
            #expect(challenges[1].proposedCredential?.password == "wrong")
            #expect((challenges[1].failureResponse as? HTTPURLResponse)?.statusCode == 401)
        }
    }

    @Test func headRequestWithAnEmptyBody_sendsNoBodyAndGetsNone() async throws {
        try await withServer { server in
            var request = URLRequest(url: server.url("/bytes/64"))
            request.httpMethod = "HEAD"
            request.httpBody = Data()
            let result = HandlerResult<Data>()
            URLSession(configuration: legacyConfiguration()).dataTask(with: request) { result.set($0, $1, $2) }.resume()
            let (data, response, error) = await result.value()
            #expect(error == nil)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(data?.isEmpty ?? true)
        }
    }

    @Test(arguments: ["GET", "PUT", "POST", "DELETE", "HEAD"])
    func emptyBody_isNoBody_andInventsNoHeader(method: String) async throws {
        try await withServer { server in
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = method
            request.httpBody = Data()
            // HEAD gets no body back: ask what was sent with a GET on the
            // same path instead, after checking HEAD does not fail.
            let result = HandlerResult<Data>()
            URLSession(configuration: legacyConfiguration()).dataTask(with: request) { result.set($0, $1, $2) }.resume()
            let (data, _, error) = await result.value()
            #expect(error == nil)
            guard method != "HEAD" else { return }
            let echo = try JSONSerialization.jsonObject(with: data ?? Data()) as? [String: Any]
            let headers = (echo?["headers"] as? [[String]] ?? []).map { $0[0].lowercased() }
            #expect(!headers.contains("content-type"), "\(headers)")
            #expect(echo?["bodyLength"] as? Int == 0)
            #expect(echo?["method"] as? String == method)
        }
    }

    @Test func getAllTasks_rightAfterInvalidateAndCancel_listsNone() async throws {
        try await withServer { server in
            let session = URLSession(configuration: legacyConfiguration(), delegate: LegacyDelegate(), delegateQueue: nil)
            session.dataTask(with: server.url("/stall/100?after=10")).resume()
            session.dataTask(with: server.url("/stall/100?after=10")).resume()
            _ = session.dataTask(with: server.url("/bytes/1"))
            session.invalidateAndCancel()
            let listed = await withCheckedContinuation { continuation in
                session.getAllTasks { continuation.resume(returning: $0.count) }
            }
            #expect(listed == 0)
            let kinds = await withCheckedContinuation { continuation in
                session.getTasksWithCompletionHandler { continuation.resume(returning: $0.count + $1.count + $2.count) }
            }
            #expect(kinds == 0)
        }
    }

    @Test func tasksCancelledByInvalidateAndCancel_completeWithTheFailingURLString() async throws {
        try await withServer { server in
            let delegate = LegacyDelegate()
            let url = server.url("/stall/100?after=10")
            let session = URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
            session.dataTask(with: url).resume()
            session.invalidateAndCancel()
            await delegate.invalidated.wait()
            let error = try #require(delegate.error as? URLError)
            #expect(error.code == .cancelled)
            #expect(failingURLString(error) == url.absoluteString)
        }
    }

    /// The expired certificate is trusted as a root, so that its date is
    /// what fails (OpenSSL reports an untrusted self-signed leaf first).
    @Test(arguments: [
        (LoopbackServer.CertificateKind.valid, false, URLError.Code.serverCertificateUntrusted, "self-signed"),
        (.expired, true, .serverCertificateHasBadDate, "expired"),
        (.wrongHost, true, .serverCertificateUntrusted, "host does not match"),
    ])
    func certificateFailure_hasApplesCodeAndSaysWhich(
        kind: LoopbackServer.CertificateKind, trusted: Bool, code: URLError.Code, words: String
    ) async throws {
        try await withServer(.init(tls: true, certificate: kind)) { server in
            let result = HandlerResult<Data>()
            let configuration = legacyConfiguration()
            if trusted { configuration.tlsTrustRootsPEM = server.certificatePEM }
            URLSession(configuration: configuration)
                .dataTask(with: server.url("/bytes/1")) { result.set($0, $1, $2) }.resume()
            let (_, _, error) = await result.value()
            let urlError = try #require(error as? URLError)
            #expect(urlError.code == code)
            #expect(urlError.localizedDescription.lowercased().contains(words), "\(urlError.localizedDescription)")
        }
    }

    @Test func certificateCodes_areApplesValues() {
        #expect(URLError.Code.serverCertificateUntrusted.rawValue == -1202)
        #expect(URLError.Code.serverCertificateHasUnknownRoot.rawValue == -1203)
        #expect(URLError.Code.serverCertificateHasBadDate.rawValue == -1201)
        #expect(URLError.Code.serverCertificateNotYetValid.rawValue == -1204)
    }
}

/// What `URLError.failureURLString` reads (`NSURLErrorFailingURLStringErrorKey`),
/// by the key's value: both names are deprecated in swift-corelibs-foundation,
/// and this project builds without warnings.
func failingURLString(_ error: URLError) -> String? {
    error.userInfo["NSErrorFailingURLStringKey"] as? String
}

/// Cancellation in the shapes legacy code produces it.
@Suite struct CancellationContractTests {
    @Test func cancelByProducingResumeData_beforeResume_completesTheTaskAndLetsTheSessionInvalidate() async throws {
        try await withServer { server in
            let delegate = LegacyDelegate()
            let session = URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
            let task = session.downloadTask(with: server.url("/bytes/10"))
            let resumeData = HandlerResult<Data>()
            task.cancel { resumeData.set($0, nil, nil) }
            session.finishTasksAndInvalidate()
            _ = await resumeData.value()
            await delegate.invalidated.wait()
            #expect((delegate.error as? URLError)?.code == .cancelled)
            #expect(delegate.calls.suffix(2) == ["complete", "invalid"])
        }
    }

    @Test func cancelWhileARedirectWaitsForItsAnswer_stillReportsMetricsThenCompletion() async throws {
        try await withServer { server in
            let delegate = SilentRedirectDelegate()
            let session = URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
            let task = session.dataTask(with: server.url("/redirect/1"))
            task.resume()
            await delegate.asked.wait()
            task.cancel()
            await delegate.completed.wait()
            #expect(delegate.calls == ["redirect", "metrics", "complete"])
            #expect(delegate.redirectCountInMetrics == 0)
            #expect(delegate.transactionCount == 1)
            session.finishTasksAndInvalidate()
        }
    }

    @Test func responseAnsweredWithCancel_failsWithApplesCancelledText() async throws {
        try await withServer { server in
            let delegate = LegacyDelegate(response: .cancel)
            URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .dataTask(with: server.url("/bytes/10")).resume()
            await delegate.completed.wait()
            #expect((delegate.error as? URLError)?.localizedDescription == "cancelled")
        }
    }
}

/// Never answers a redirect (the task is cancelled meanwhile); records the
/// rest.
final class SilentRedirectDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    // @unchecked: everything recorded is behind `state`'s lock.
    let asked = Signal()
    let completed = Signal()
    private let state = Mutex<(calls: [String], redirects: Int, transactions: Int)>(([], -1, -1))

    var calls: [String] { state.withLock { $0.calls } }
    var redirectCountInMetrics: Int { state.withLock { $0.redirects } }
    var transactionCount: Int { state.withLock { $0.transactions } }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        state.withLock { $0.calls.append("redirect") }
        asked.fire()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        state.withLock {
            $0.calls.append("metrics")
            $0.redirects = metrics.redirectCount
            $0.transactions = metrics.transactionMetrics.count
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        state.withLock { $0.calls.append("complete") }
        completed.fire()
    }
}

@Suite struct CrossOriginTests {
    @Test func configurationAuthorization_doesNotFollowARedirectToAnotherPort() async throws {
        try await withServer { first in
            let second = try await LoopbackServer.start()
            defer { Task { try? await second.shutdown() } }
            let configuration = legacyConfiguration()
            configuration.httpAdditionalHeaders = ["Authorization": "Bearer session-secret"]
            let result = HandlerResult<Data>()
            URLSession(configuration: configuration)
                .dataTask(with: first.url("/cross-origin-redirect?port=\(second.port)")) { result.set($0, $1, $2) }
                .resume()
            let (data, _, error) = await result.value()
            #expect(error == nil)
            let text = String(decoding: data ?? Data(), as: UTF8.self).lowercased()
            #expect(text.contains("\"uri\":\"/echo\""))
            #expect(!text.contains("authorization"), "\(text)")
        }
    }
}

@Suite struct DecompressionBombTests {
    @Test func bomb_failsACompletionHandlerTask() async throws {
        try await withServer { server in
            let result = HandlerResult<Data>()
            URLSession(configuration: legacyConfiguration())
                .dataTask(with: server.url("/gzip-bomb/\(256 << 20)")) { result.set($0, $1, $2) }.resume()
            let (data, _, error) = await result.value()
            #expect(data == nil)
            #expect((error as? URLError)?.code == .cannotDecodeContentData)
        }
    }
}

/// `state` after `cancel()`: `.canceling` until the completion reaches the
/// delegate or the handler, then `.completed`, as Apple's.
@Suite struct CancelStateTests {
    @Test func stateAfterCancel_isCanceling_untilTheCompletionIsDelivered() async throws {
        try await withServer { server in
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            let delegate = LegacyDelegate()
            // The delegate queue is busy from before the task exists (its
            // didCreateTask call and its driver run on that queue too), so the
            // completion cannot be delivered however soon the core ends the
            // transfer.
            let release = DispatchSemaphore(value: 0)
            queue.addOperation { release.wait() }
            let task = URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: queue)
                .dataTask(with: server.url("/stall/100?after=10"))
            task.resume()
            task.cancel()
            #expect(task.state == .canceling)
            try await Task.sleep(for: .milliseconds(300))  // the core has ended by now (not asserted on)
            #expect(task.state == .canceling)
            release.signal()
            try await withTimeLimit(30) { await delegate.completed.wait() }
            #expect(task.state == .completed)
            #expect((delegate.error as? URLError)?.code == .cancelled)
        }
    }

    @Test func stateAfterCancel_ofACompletionHandlerTask_isCanceling_untilTheHandlerRuns() async throws {
        try await withServer { server in
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            let result = HandlerResult<Data>()
            let release = DispatchSemaphore(value: 0)
            queue.addOperation { release.wait() }
            let task = URLSession(configuration: legacyConfiguration(), delegate: nil, delegateQueue: queue)
                .dataTask(with: server.url("/stall/100?after=10")) { result.set($0, $1, $2) }
            task.resume()
            task.cancel()
            #expect(task.state == .canceling)
            try await Task.sleep(for: .milliseconds(300))
            #expect(task.state == .canceling)
            release.signal()
            let (_, _, error) = try await withTimeLimit(30) { await result.value() }
            #expect((error as? URLError)?.code == .cancelled)
            #expect(task.state == .completed)
        }
    }
}
