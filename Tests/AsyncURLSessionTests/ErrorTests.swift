import AsyncURLSession
import Foundation
import LoopbackServer
import Testing

@Suite struct ErrorTests {
    private func failure(_ request: URLRequest, configuration: SessionConfiguration = testConfiguration()) async
        -> URLError.Code?
    {
        do {
            _ = try await Session(configuration: configuration).data(for: request)
            return nil
        } catch {
            return error.urlErrorCode
        }
    }

    @Test func connectionDroppedMidBody_isNetworkConnectionLost() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/drop/1000000?after=300000"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.response?.statusCode == 200)
            #expect(recorded.error?.urlErrorCode == .networkConnectionLost)
        }
    }

    @Test func nothingListening_isCannotConnectToHost() async throws {
        let code = await failure(URLRequest(url: URL(string: "http://127.0.0.1:1/")!))
        #expect(code == .cannotConnectToHost)
    }

    @Test(arguments: ["ftp://127.0.0.1/file", "file:///etc/passwd", "gopher://127.0.0.1/", "httpx://127.0.0.1/"])
    func unsupportedScheme_isUnsupportedURL(url: String) async throws {
        let code = await failure(URLRequest(url: URL(string: url)!))
        #expect(code == .unsupportedURL)
    }

    @Test(arguments: ["http:///no-host", "https:relative-only"])
    func urlWithoutHost_isBadURL(url: String) async throws {
        let code = await failure(URLRequest(url: URL(string: url)!))
        #expect(code == .badURL)
    }

    /// As Apple's and FoundationNetworking's: a request whose URL was set
    /// to nil is an unsupported URL.
    @Test func requestWithoutURL_isUnsupportedURL() async throws {
        var request = URLRequest(url: URL(string: "http://127.0.0.1/")!)
        request.url = nil
        let code = await failure(request)
        #expect(code == .unsupportedURL)
    }

    /// Schemes are case-insensitive (RFC 3986 §3.1).
    @Test func uppercaseScheme_isFetched() async throws {
        try await withServer { server in
            let url = URL(string: server.url("/bytes/5").absoluteString.replacingOccurrences(of: "http:", with: "HTTP:"))!
            let (data, response) = try await Session(configuration: testConfiguration()).data(for: URLRequest(url: url))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(data.count == 5)
        }
    }

    @Test(arguments: ["1\r\nX-Injected: yes", "1\nX-Injected: yes", "1\r", "1\u{0}2"])
    func headerValueWithCRorLF_isRefusedBeforeAnythingIsSent(value: String) async throws {
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.httpAdditionalHeaders = ["X-A": value]
            let code = await failure(URLRequest(url: server.url("/echo")), configuration: configuration)
            #expect(code == .badURL)
            #expect(server.acceptedConnections == 0)
        }
    }

    /// FoundationNetworking's URLRequest already drops such values when they
    /// are set; whatever path they take, no injected header reaches the server.
    @Test func headerValueWithCRLF_inURLRequest_neverReachesTheServer() async throws {
        try await withServer { server in
            var request = URLRequest(url: server.url("/echo"))
            request.setValue("1\r\nX-Injected: yes", forHTTPHeaderField: "X-A")
            let (data, _) = try await Session(configuration: testConfiguration()).data(for: request)
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            #expect(echo.value(of: "x-injected") == nil)
        }
    }

    @Test(arguments: ["Bad Name", "Bad:Name", "", "X-\u{1}"])
    func invalidHeaderName_isRefusedBeforeAnythingIsSent(name: String) async throws {
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.httpAdditionalHeaders = [name: "value"]
            let code = await failure(URLRequest(url: server.url("/echo")), configuration: configuration)
            #expect(code == .badURL)
            #expect(server.acceptedConnections == 0)
        }
    }

    @Test func invalidMethod_isRefused() async throws {
        try await withServer { server in
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = "GET /evil HTTP/1.1\r\n"
            #expect(await failure(request) == .badURL)
            #expect(server.acceptedConnections == 0)
        }
    }

    @Test func nonHTTPReply_isBadServerResponse() async throws {
        try await withServer { server in
            #expect(await failure(URLRequest(url: server.url("/garbage"))) == .badServerResponse)
        }
    }

    @Test func untrustedSelfSignedCertificate_isUntrusted() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            // Not trusting the server's self-signed certificate: the system
            // bundle does not know it. Apple reports that as -1202.
            #expect(await failure(URLRequest(url: server.url("/bytes/1"))) == .serverCertificateUntrusted)
        }
    }

    @Test func expiredCertificate_isBadDate() async throws {
        try await withServer(LoopbackServer.Options(tls: true, certificate: .expired)) { server in
            let code = await failure(URLRequest(url: server.url("/bytes/1")), configuration: testConfiguration(trusting: server))
            #expect(code == .serverCertificateHasBadDate)
        }
    }

    @Test func certificateForAnotherHost_isUntrusted() async throws {
        try await withServer(LoopbackServer.Options(tls: true, certificate: .wrongHost)) { server in
            let code = await failure(URLRequest(url: server.url("/bytes/1")), configuration: testConfiguration(trusting: server))
            #expect(code == .serverCertificateUntrusted)
        }
    }
}
