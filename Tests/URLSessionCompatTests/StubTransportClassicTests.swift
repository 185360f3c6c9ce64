import AsyncURLSessionTesting
import Foundation
import Synchronization
import Testing
import TestSupport
import URLSessionCompat

/// Legacy code under test keeps its completion handlers and delegates; its
/// test routes the session's requests to a `StubTransport` through the
/// core configuration the classic one stands for.
@Suite struct StubTransportClassicTests {
    private func stubbedConfiguration(_ stubs: StubTransport) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.sessionConfiguration.localTransport = stubs
        return configuration
    }

    @Test func completionHandler_getsTheStubbedResponse() async throws {
        try await withTimeLimit {
            let stubs = StubTransport()
            stubs.stub(.url("https://legacy.example/profile"), with: .text("hello", headers: ["X-Stub": "1"]))
            let session = URLSession(configuration: stubbedConfiguration(stubs))
            let outcome = Outcome<String>()
            session.dataTask(with: URL(string: "https://legacy.example/profile")!) { data, response, error in
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                let header = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Stub") ?? "-"
                outcome.set("\(status) \(header) \(String(decoding: data ?? Data(), as: UTF8.self))", nil, error)
            }.resume()
            let (text, _, error) = await outcome.value()
            #expect(error == nil)
            #expect(text == "200 1 hello")
        }
    }

    @Test func redirect_goesThroughTheDelegate() async throws {
        try await withTimeLimit {
            let stubs = StubTransport()
            stubs.stub(.path("/old"), with: .redirect(to: "/new", status: 301))
            stubs.stub(.path("/new"), with: .text("moved here"))
            let delegate = RedirectCounter()
            let session = URLSession(configuration: stubbedConfiguration(stubs), delegate: delegate, delegateQueue: nil)
            let (data, response) = try await session.data(from: URL(string: "https://legacy.example/old")!)
            #expect(String(decoding: data, as: UTF8.self) == "moved here")
            #expect(response.url?.path == "/new")
            #expect(delegate.redirects == [301])
            session.invalidateAndCancel()
        }
    }
}

private final class RedirectCounter: NSObject, URLSessionTaskDelegate, Sendable {
    private let seen = Mutex<[Int]>([])
    var redirects: [Int] { seen.withLock { $0 } }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        seen.withLock { $0.append(response.statusCode) }
        completionHandler(request)
    }
}
