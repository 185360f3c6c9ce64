import Foundation
import Synchronization
import Testing
import TestSupport
import URLSessionCompat

/// Legacy test suites stub the network with URLProtocol subclasses, written
/// as for Foundation: these are such stubs, unchanged, on this adapter.

/// Answers `https://stub.example/...`: /hello with a body, /old with a
/// redirect to /hello, /fail with an error, /slow never (until stopped).
final class ExampleStubProtocol: URLProtocol, @unchecked Sendable {
    // @unchecked: the statics are behind a lock; instances are driven by the adapter.
    static let stopped = Mutex(0)
    static let seenBodies = Mutex<[Data]>([])

    override class func canInit(with request: URLRequest) -> Bool {
        request.url?.host == "stub.example"
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let client, let url = request.url else { return }
        if let body = request.httpBody { Self.seenBodies.withLock { $0.append(body) } }
        switch url.path {
        case "/hello":
            let response = HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "text/plain", "X-Stub": "yes"])!
            client.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            client.urlProtocol(self, didLoad: Data("hello ".utf8))
            client.urlProtocol(self, didLoad: Data("world".utf8))
            client.urlProtocolDidFinishLoading(self)
        case "/old":
            let response = HTTPURLResponse(url: url, statusCode: 301, httpVersion: "HTTP/1.1", headerFields: [:])!
            client.urlProtocol(self, wasRedirectedTo: URLRequest(url: URL(string: "https://stub.example/hello")!), redirectResponse: response)
        case "/fail":
            client.urlProtocol(self, didFailWithError: URLError(.notConnectedToInternet))
        case "/slow":
            break
        default:
            let response = HTTPURLResponse(url: url, statusCode: 404, httpVersion: "HTTP/1.1", headerFields: nil)!
            client.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            client.urlProtocolDidFinishLoading(self)
        }
    }

    override func stopLoading() {
        Self.stopped.withLock { $0 += 1 }
    }
}

/// Registered with `URLProtocol.registerClass`: answers one host only, so
/// the other tests' sessions (which consult registered classes too) are untouched.
final class RegisteredStubProtocol: URLProtocol, @unchecked Sendable {
    override class func canInit(with request: URLRequest) -> Bool {
        request.url?.host == "registered-stub.example"
    }

    override func startLoading() {
        let response = HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: nil)!
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Data("registered".utf8))
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}
}

/// Answers a moment later, from another thread, as stubs that simulate
/// latency do (`startLoading` returns at once).
final class LateStubProtocol: URLProtocol, @unchecked Sendable {
    override class func canInit(with request: URLRequest) -> Bool {
        request.url?.host == "late-stub.example"
    }

    override func startLoading() {
        let request = request
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { [self] in
            let response = HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: nil)!
            client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            client?.urlProtocol(self, didLoad: Data("late".utf8))
            client?.urlProtocolDidFinishLoading(self)
        }
    }

    override func stopLoading() {}
}

/// Answers with its `task`'s identifier, as stubs that keep per-task state do.
final class TaskReportingStubProtocol: URLProtocol, @unchecked Sendable {
    override class func canInit(with request: URLRequest) -> Bool {
        request.url?.host == "task-stub.example"
    }

    override func startLoading() {
        let response = HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: nil)!
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Data("task \(task.map { String($0.taskIdentifier) } ?? "nil")".utf8))
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}
}

@Suite struct URLProtocolTests {
    private func stubbedConfiguration() -> URLSessionConfiguration {
        let configuration = legacyConfiguration()
        configuration.protocolClasses = [ExampleStubProtocol.self]
        return configuration
    }

    @Test func protocolClass_answersACompletionHandlerTask() async throws {
        let result = HandlerResult<Data>()
        URLSession(configuration: stubbedConfiguration())
            .dataTask(with: URL(string: "https://stub.example/hello")!) { result.set($0, $1, $2) }.resume()
        let (data, response, error) = try await withTimeLimit { await result.value() }
        #expect(error == nil)
        #expect(String(decoding: data ?? Data(), as: UTF8.self) == "hello world")
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 200)
        #expect(http.value(forHTTPHeaderField: "X-Stub") == "yes")
        #expect(http.url?.absoluteString == "https://stub.example/hello")
    }

    @Test func wasRedirectedTo_goesThroughTheRedirectDelegate_thenTheProtocolAnswersTheNewRequest() async throws {
        let delegate = LegacyDelegate()
        let session = URLSession(configuration: stubbedConfiguration(), delegate: delegate, delegateQueue: nil)
        session.dataTask(with: URL(string: "https://stub.example/old")!).resume()
        try await withTimeLimit { await delegate.completed.wait() }
        #expect(delegate.error == nil)
        #expect(delegate.calls.filter { $0 == "redirect" }.count == 1)
        #expect(String(decoding: delegate.body, as: UTF8.self) == "hello world")
        session.finishTasksAndInvalidate()
    }

    @Test func didFailWithError_isTheTasksError() async throws {
        let result = HandlerResult<Data>()
        URLSession(configuration: stubbedConfiguration())
            .dataTask(with: URL(string: "https://stub.example/fail")!) { result.set($0, $1, $2) }.resume()
        let (_, _, error) = try await withTimeLimit { await result.value() }
        #expect((error as? URLError)?.code == .notConnectedToInternet)
    }

    @Test func cancellingALoadInProgress_callsStopLoading() async throws {
        let before = ExampleStubProtocol.stopped.withLock { $0 }
        let result = HandlerResult<Data>()
        let task = URLSession(configuration: stubbedConfiguration())
            .dataTask(with: URL(string: "https://stub.example/slow")!) { result.set($0, $1, $2) }
        task.resume()
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        let (_, _, error) = try await withTimeLimit { await result.value() }
        #expect((error as? URLError)?.code == .cancelled)
        try await withTimeLimit {
            while ExampleStubProtocol.stopped.withLock({ $0 }) == before { try await Task.sleep(for: .milliseconds(10)) }
        }
    }

    @Test func uploadBody_reachesTheProtocolAsHTTPBody() async throws {
        let result = HandlerResult<Data>()
        var request = URLRequest(url: URL(string: "https://stub.example/hello")!)
        request.httpMethod = "POST"
        let body = Data("payload-\(UUID().uuidString)".utf8)
        URLSession(configuration: stubbedConfiguration())
            .uploadTask(with: request, from: body) { result.set($0, $1, $2) }.resume()
        let (_, _, error) = try await withTimeLimit { await result.value() }
        #expect(error == nil)
        #expect(ExampleStubProtocol.seenBodies.withLock { $0.contains(body) })
    }

    @Test func registeredClass_answersTheSharedSession() async throws {
        #expect(URLProtocol.registerClass(RegisteredStubProtocol.self))
        defer { URLProtocol.unregisterClass(RegisteredStubProtocol.self) }
        let result = HandlerResult<Data>()
        URLSession.shared.dataTask(with: URL(string: "https://registered-stub.example/x")!) { result.set($0, $1, $2) }
            .resume()
        let (data, _, error) = try await withTimeLimit { await result.value() }
        #expect(error == nil)
        #expect(String(decoding: data ?? Data(), as: UTF8.self) == "registered")
    }

    @Test func protocolAnsweringLaterFromAnotherThread_servesATaskNobodyHolds() async throws {
        let configuration = legacyConfiguration()
        configuration.protocolClasses = [LateStubProtocol.self]
        let result = HandlerResult<Data>()
        URLSession(configuration: configuration)
            .dataTask(with: URL(string: "https://late-stub.example/x")!) { result.set($0, $1, $2) }.resume()
        let (data, _, error) = try await withTimeLimit { await result.value() }
        #expect(error == nil)
        #expect(String(decoding: data ?? Data(), as: UTF8.self) == "late")
    }

    @Test func protocolInstance_knowsItsTask() async throws {
        let configuration = legacyConfiguration()
        configuration.protocolClasses = [TaskReportingStubProtocol.self]
        let session = URLSession(configuration: configuration)
        _ = session.dataTask(with: URL(string: "https://task-stub.example/first")!)
        let result = HandlerResult<Data>()
        let task = session.dataTask(with: URL(string: "https://task-stub.example/x")!) { result.set($0, $1, $2) }
        task.resume()
        let (data, _, error) = try await withTimeLimit { await result.value() }
        #expect(error == nil)
        #expect(String(decoding: data ?? Data(), as: UTF8.self) == "task \(task.taskIdentifier)")
    }

    @Test func registerClass_refusesAClassThatIsNoURLProtocol() {
        #expect(!URLProtocol.registerClass(NSObject.self))
    }
}
