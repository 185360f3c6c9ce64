import Foundation
import LoopbackServer
import Testing
import TestSupport
import URLSessionCompat

/// API that legacy code calls, each working end to end.
@Suite struct ClassicAPITests {
    @Test func didCreateTask_comesOnceBeforeAnythingElse_forEveryFactory() async throws {
        try await withServer { server in
            let delegate = LegacyDelegate()
            let session = URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
            let data = session.dataTask(with: server.url("/bytes/10"))
            let download = session.downloadTask(with: server.url("/bytes/10"))
            data.resume()
            download.resume()
            await delegate.completed.wait(for: 2)
            #expect(delegate.createdTasks.sorted() == [data.taskIdentifier, download.taskIdentifier].sorted())
            #expect(delegate.calls.first == "create")
            #expect(delegate.calls.filter { $0 == "create" }.count == 2)
            session.finishTasksAndInvalidate()
        }
    }

    @Test func didCreateTask_isCalledForTheAsyncCalls() async throws {
        try await withServer { server in
            let delegate = LegacyDelegate()
            let session = URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
            _ = try await session.data(from: server.url("/bytes/10"))
            #expect(delegate.createdTasks.count == 1)
            session.finishTasksAndInvalidate()
        }
    }

    @Test func prefersIncrementalDeliveryOff_deliversTheBodyInOneCall() async throws {
        try await withServer { server in
            let delegate = LegacyDelegate()
            let task = URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .dataTask(with: server.url("/drip/3000?chunk=500&interval=5"))
            #expect(task.prefersIncrementalDelivery)
            task.prefersIncrementalDelivery = false
            task.resume()
            await delegate.completed.wait()
            #expect(delegate.calls.filter { $0 == "data" }.count == 1)
            #expect(delegate.body.count == 3000)
            #expect(delegate.calls.suffix(3) == ["data", "metrics", "complete"])
        }
    }

    @Test func prefersIncrementalDelivery_defaultsToFalseForHandlersAndDownloads() {
        let session = URLSession(configuration: legacyConfiguration())
        let url = URL(string: "http://127.0.0.1:1/")!
        #expect(!session.dataTask(with: url) { _, _, _ in }.prefersIncrementalDelivery)
        #expect(!session.downloadTask(with: url).prefersIncrementalDelivery)
        #expect(session.dataTask(with: url).prefersIncrementalDelivery)
        session.invalidateAndCancel()
    }

    @Test func asyncDataWithATaskDelegate_reportsTheBodyToIt() async throws {
        try await withServer { server in
            let taskDelegate = LegacyDelegate()
            let session = URLSession(configuration: legacyConfiguration())
            let (data, _) = try await session.data(from: server.url("/bytes/200000"), delegate: taskDelegate)
            #expect(data.count == 200_000)
            #expect(taskDelegate.body == data)
            // The result comes back to the caller, not to the delegate.
            #expect(!taskDelegate.calls.contains("complete"))
            session.finishTasksAndInvalidate()
        }
    }

    @Test func asyncDownloadWithATaskDelegate_reportsProgressToIt() async throws {
        try await withServer { server in
            let taskDelegate = LegacyDelegate()
            let session = URLSession(configuration: legacyConfiguration())
            let (file, _) = try await session.download(from: server.url("/bytes/300000"), delegate: taskDelegate)
            defer { try? FileManager.default.removeItem(at: file) }
            #expect(taskDelegate.calls.contains("write"))
            #expect(!taskDelegate.calls.contains("finishDownloading"))
            #expect(try Data(contentsOf: file).count == 300_000)
            session.finishTasksAndInvalidate()
        }
    }

    @Test func completionHandlerTask_withASessionDelegate_getsNoDataCalls() async throws {
        try await withServer { server in
            let delegate = LegacyDelegate()
            let result = HandlerResult<Data>()
            URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .dataTask(with: server.url("/bytes/5000")) { result.set($0, $1, $2) }.resume()
            let (data, _, _) = await result.value()
            #expect(data?.count == 5000)
            #expect(!delegate.calls.contains("data"))
            #expect(!delegate.calls.contains("complete"))
        }
    }
}

@Suite struct InformationalDelegateTests {
    @Test func earlyHints_reachTheDelegateBeforeTheResponse() async throws {
        try await withServer { server in
            let delegate = LegacyDelegate()
            URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .dataTask(with: server.url("/status/103")).resume()
            await delegate.completed.wait()
            #expect(delegate.informationalStatuses == [103])
            let calls = delegate.calls.filter { $0 != "data" }
            #expect(calls == ["create", "informational 103", "response", "metrics", "complete"], "\(calls)")
        }
    }
}

@Suite struct AsyncBytesTextTests {
    @Test func classicBytes_haveLines() async throws {
        try await withServer { server in
            var request = URLRequest(url: server.url("/echo-body"))
            request.httpMethod = "POST"
            request.httpBody = Data("one\ntwo\r\nthree".utf8)
            let session = URLSession(configuration: legacyConfiguration())
            let (bytes, _) = try await session.bytes(for: request)
            var lines: [String] = []
            for try await line in bytes.lines { lines.append(line) }
            #expect(lines == ["one", "two", "three"])
            session.finishTasksAndInvalidate()
        }
    }
}

/// Every property of Apple's configuration is there (legacy code compiles),
/// kept, and copied with the configuration; the TLS bounds are enforced.
@Suite struct ConfigurationPropertyTests {
    @Test func applesProperties_areKeptAndCopied() throws {
        let configuration = URLSessionConfiguration.default
        configuration.shouldUseExtendedBackgroundIdleMode = true
        configuration.sharedContainerIdentifier = "group.example"
        configuration.multipathServiceType = .handover
        configuration.allowsUltraConstrainedNetworkAccess = false
        configuration.requiresDNSSECValidation = true
        configuration.sessionSendsLaunchEvents = false
        configuration.usesClassicLoadingMode = false
        configuration.enablesEarlyData = true
        configuration.protocolClasses = []
        configuration.tlsMinimumSupportedProtocolVersion = .TLSv13
        let copy = try #require(configuration.copy() as? URLSessionConfiguration)
        #expect(copy.shouldUseExtendedBackgroundIdleMode)
        #expect(copy.sharedContainerIdentifier == "group.example")
        #expect(copy.multipathServiceType == .handover)
        #expect(!copy.allowsUltraConstrainedNetworkAccess)
        #expect(copy.requiresDNSSECValidation)
        #expect(!copy.sessionSendsLaunchEvents)
        #expect(!copy.usesClassicLoadingMode)
        #expect(copy.enablesEarlyData)
        #expect(copy.protocolClasses?.isEmpty == true)
        #expect(copy.tlsMinimumSupportedProtocolVersion == .TLSv13)
        #expect(URLSessionConfiguration.ephemeral.tlsMinimumSupportedProtocolVersion == .TLSv12)
        #expect(URLSessionConfiguration.ephemeral.tlsMaximumSupportedProtocolVersion == .TLSv13)
    }

    private func fetch(_ server: LoopbackServer, _ configure: (URLSessionConfiguration) -> Void) async -> (any Error)? {
        let configuration = legacyConfiguration()
        configuration.tlsTrustRootsPEM = server.certificatePEM
        configure(configuration)
        let result = HandlerResult<Data>()
        URLSession(configuration: configuration).dataTask(with: server.url("/bytes/10")) { result.set($0, $1, $2) }.resume()
        return await result.value().2
    }

    @Test func tlsMinimumAboveWhatTheServerSpeaks_failsTheHandshake() async throws {
        try await withServer(.init(tls: true, tls12Only: true)) { server in
            let error = await fetch(server) { $0.tlsMinimumSupportedProtocolVersion = .TLSv13 }
            #expect((error as? URLError)?.code == .secureConnectionFailed)
            #expect(await fetch(server) { _ in } == nil)
        }
    }

    @Test func tlsMaximumBelowWhatTheServerPrefers_stillConnects() async throws {
        try await withServer(.init(tls: true)) { server in
            #expect(await fetch(server) { $0.tlsMaximumSupportedProtocolVersion = .TLSv12 } == nil)
        }
    }

    @Test func tlsMinimumAboveMaximum_failsWithAClearError() async throws {
        try await withServer(.init(tls: true)) { server in
            let error = await fetch(server) {
                $0.tlsMinimumSupportedProtocolVersion = .TLSv13
                $0.tlsMaximumSupportedProtocolVersion = .TLSv12
            }
            #expect((error as? URLError)?.code == .secureConnectionFailed)
            #expect((error as? URLError)?.localizedDescription.contains("tlsMinimumSupportedVersion") == true)
        }
    }
}

/// A legacy client that logs in and relies on the session cookie it got.
@Suite struct LegacyCookieTests {
    private func fetch(_ session: URLSession, _ url: URL) async -> String {
        let result = HandlerResult<Data>()
        session.dataTask(with: url) { result.set($0, $1, $2) }.resume()
        return String(decoding: await result.value().0 ?? Data(), as: UTF8.self)
    }

    @Test func sessionCookie_fromALogin_isSentWithLaterRequests() async throws {
        try await withServer { server in
            let session = URLSession(configuration: legacyConfiguration())
            _ = await fetch(session, server.url("/cookies/set?session=logged-in"))
            #expect(await fetch(session, server.url("/cookies/echo")) == "session=logged-in")
            #expect(session.configuration.httpCookieStorage?.cookies?.map(\.name) == ["session"])
            session.finishTasksAndInvalidate()
        }
    }

    @Test func reset_emptiesTheCookieStorage() async throws {
        try await withServer { server in
            let session = URLSession(configuration: legacyConfiguration())
            _ = await fetch(session, server.url("/cookies/set?session=logged-in"))
            await withCheckedContinuation { continuation in session.reset { continuation.resume() } }
            #expect(await fetch(session, server.url("/cookies/echo")) == "")
            session.finishTasksAndInvalidate()
        }
    }

    @Test func cookieStorageSetToNil_turnsCookiesOff() async throws {
        try await withServer { server in
            let configuration = legacyConfiguration()
            configuration.httpCookieStorage = nil
            let session = URLSession(configuration: configuration)
            _ = await fetch(session, server.url("/cookies/set?session=logged-in"))
            #expect(await fetch(session, server.url("/cookies/echo")) == "")
            session.finishTasksAndInvalidate()
        }
    }
}

@Suite struct CookieStorageClassTests {
    @Test func classicStorage_isTheLibrarysClass_withApplesDefaults() {
        #expect(String(reflecting: HTTPCookieStorage.self) == "URLSessionCompat.HTTPCookieStorage")
        #expect(URLSessionConfiguration.default.httpCookieStorage === HTTPCookieStorage.shared)
        let ephemeral = URLSessionConfiguration.ephemeral.httpCookieStorage
        #expect(ephemeral != nil && ephemeral !== HTTPCookieStorage.shared)
        #expect(HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "g")
            === HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "g"))
    }

    @Test func cookiePutInTheConfiguredStorage_isSent() async throws {
        try await withServer { server in
            let storage = HTTPCookieStorage()
            let cookie = try #require(HTTPCookie(properties: [
                .name: "pref", .value: "1", .domain: "127.0.0.1", .path: "/",
            ]))
            storage.setCookie(cookie)
            let configuration = legacyConfiguration()
            configuration.httpCookieStorage = storage
            let result = HandlerResult<Data>()
            URLSession(configuration: configuration)
                .dataTask(with: server.url("/cookies/echo")) { result.set($0, $1, $2) }.resume()
            let (data, _, _) = await result.value()
            #expect(String(decoding: data ?? Data(), as: UTF8.self) == "pref=1")
            #expect(storage.cookies(for: server.url("/"))?.map(\.name) == ["pref"])
        }
    }

    @Test func storageRules_applyToCookiesSetDirectly() {
        let storage = HTTPCookieStorage()
        storage.cookieAcceptPolicy = .never
        let cookie = HTTPCookie(properties: [.name: "a", .value: "1", .domain: "example.org", .path: "/"])!
        storage.setCookies([cookie], for: URL(string: "https://example.org/"), mainDocumentURL: nil)
        #expect(storage.cookies?.isEmpty == true)
    }

    @Test func setCookiesForAURL_refusesAPublicSuffixDomain_soItNeverReachesAnotherSite() {
        let storage = HTTPCookieStorage()
        let wide = HTTPCookie(properties: [
            .name: "track", .value: "1", .domain: ".com", .path: "/", .expires: Date().addingTimeInterval(3600),
        ])!
        let own = HTTPCookie(properties: [.name: "own", .value: "2", .domain: ".example.com", .path: "/"])!
        storage.setCookies([wide, own], for: URL(string: "https://www.example.com/"), mainDocumentURL: nil)
        #expect(storage.cookies(for: URL(string: "https://unrelated-shop.com/")!)?.isEmpty == true)
        #expect(storage.cookies(for: URL(string: "https://www.example.com/")!)?.map(\.name) == ["own"])
    }

    @Test func setCookiesForAURL_refusesAnotherSitesDomain() {
        let storage = HTTPCookieStorage()
        let foreign = HTTPCookie(properties: [.name: "a", .value: "1", .domain: "other.org", .path: "/"])!
        storage.setCookies([foreign], for: URL(string: "https://example.org/"), mainDocumentURL: nil)
        #expect(storage.cookies?.isEmpty == true)
    }

    @Test func setCookie_refusesAPublicSuffixDomain() {
        let storage = HTTPCookieStorage()
        storage.setCookie(HTTPCookie(properties: [.name: "a", .value: "1", .domain: ".co.uk", .path: "/"])!)
        #expect(storage.cookies(for: URL(string: "https://shop.co.uk/")!)?.isEmpty == true)
        storage.setCookie(HTTPCookie(properties: [.name: "b", .value: "2", .domain: ".shop.co.uk", .path: "/"])!)
        #expect(storage.cookies(for: URL(string: "https://www.shop.co.uk/")!)?.map(\.name) == ["b"])
    }
}

/// The classic credential storage: the library's class, consulted by
/// default handling on every path, and where `.permanent` answers go.
@Suite struct CredentialStorageClassTests {
    private func space(_ server: LoopbackServer) -> URLProtectionSpace {
        URLProtectionSpace(
            host: "127.0.0.1", port: server.port, protocol: "http", realm: "loopback",
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
    }

    @Test func classicStorage_isTheLibrarysClass_withApplesDefaults() {
        #expect(String(reflecting: URLCredentialStorage.self) == "URLSessionCompat.URLCredentialStorage")
        #expect(URLSessionConfiguration.default.urlCredentialStorage === URLCredentialStorage.shared)
        let ephemeral = URLSessionConfiguration.ephemeral.urlCredentialStorage
        #expect(ephemeral != nil && ephemeral !== URLCredentialStorage.shared)
    }

    @Test func storedDefaultCredential_answersACompletionHandlerTaskWithoutDelegate() async throws {
        try await withServer { server in
            let storage = URLCredentialStorage()
            storage.setDefaultCredential(URLCredential(user: "u", password: "p", persistence: .permanent), for: space(server))
            let configuration = legacyConfiguration()
            configuration.urlCredentialStorage = storage
            let result = HandlerResult<Data>()
            URLSession(configuration: configuration)
                .dataTask(with: server.url("/auth/basic?user=u&password=p")) { result.set($0, $1, $2) }.resume()
            let (_, response, _) = await result.value()
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
        }
    }

    @Test func permanentAnswer_landsInTheConfiguredStorage() async throws {
        try await withServer { server in
            let storage = URLCredentialStorage()
            let configuration = legacyConfiguration()
            configuration.urlCredentialStorage = storage
            let delegate = LegacyDelegate(credential: URLCredential(user: "u", password: "p", persistence: .permanent))
            URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
                .dataTask(with: server.url("/auth/basic?user=u&password=p")).resume()
            await delegate.completed.wait()
            #expect(storage.credentials(for: space(server))?["u"]?.password == "p")
        }
    }
}

/// The classic configuration's additions for TLS reach the wire.
@Suite struct ClassicTLSAdditionsTests {
    @Test func clientIdentity_isPresented_toAServerThatRequiresOne() async throws {
        try await withServer(LoopbackServer.Options(tls: true, requireClientCertificate: true)) { server in
            let pem = try #require(server.clientIdentityPEM)
            let configuration = legacyConfiguration()
            configuration.tlsTrustRootsPEM = server.certificatePEM
            configuration.clientIdentity = .pem(certificate: pem.certificate, privateKey: pem.privateKey)
            let result = HandlerResult<Data>()
            URLSession(configuration: configuration).dataTask(with: server.url("/bytes/3")) { result.set($0, $1, $2) }.resume()
            let (data, _, error) = try await withTimeLimit { await result.value() }
            #expect(error == nil)
            #expect(data?.count == 3)
        }
    }

    @Test func pinnedPublicKeys_refuseAnotherKey() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let configuration = legacyConfiguration()
            configuration.tlsTrustRootsPEM = server.certificatePEM
            configuration.pinnedPublicKeys = ["127.0.0.1": [Data(repeating: 1, count: 32).base64EncodedString()]]
            let result = HandlerResult<Data>()
            URLSession(configuration: configuration).dataTask(with: server.url("/bytes/3")) { result.set($0, $1, $2) }.resume()
            let (_, _, error) = try await withTimeLimit { await result.value() }
            #expect((error as? URLError)?.code == .serverCertificateUntrusted)
        }
    }
}
