import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Testing

/// HTTP Strict Transport Security: learned from https responses, applied
/// to later http requests before anything is sent.
@Suite struct HSTSTests {
    /// An https server's URL by name (the certificate lists localhost).
    private func localhost(_ server: LoopbackServer, _ path: String, scheme: String = "https") throws -> URL {
        try #require(URL(string: "\(scheme)://localhost:\(server.port)\(path)"))
    }

    private let policy = "/response-headers?Strict-Transport-Security=max-age%3D600"

    @Test func learnedOverHTTPS_upgradesTheNextHTTPRequest() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let configuration = testConfiguration(trusting: server)
            let session = Session(configuration: configuration)
            _ = try await session.data(from: try localhost(server, policy))
            #expect(configuration.hstsStore?.isKnown(host: "localhost") == true)
            // Plain http to the TLS port would fail; upgraded, it is https.
            let (data, response) = try await session.data(from: try localhost(server, "/bytes/5", scheme: "http"))
            #expect(data.count == 5)
            #expect(response.url?.scheme == "https")
            #expect(response.url?.port == server.port)
        }
    }

    @Test func withoutThePolicy_httpToTheTLSPortFails() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let session = Session(configuration: testConfiguration(trusting: server))
            await #expect(throws: URLError.self) {
                _ = try await session.data(from: try localhost(server, "/bytes/5", scheme: "http"))
            }
        }
    }

    @Test func ipAddress_isNeverLearned() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let configuration = testConfiguration(trusting: server)
            _ = try await Session(configuration: configuration).data(from: server.url(policy))
            #expect(configuration.hstsStore?.isKnown(host: "127.0.0.1") == false)
        }
    }

    @Test func plainHTTPResponse_isNeverLearned() async throws {
        try await withServer { server in
            let configuration = testConfiguration()
            let url = try #require(URL(string: "http://localhost:\(server.port)\(policy)"))
            _ = try await Session(configuration: configuration).data(from: url)
            #expect(configuration.hstsStore?.isKnown(host: "localhost") == false)
        }
    }

    @Test func maxAgeZero_forgetsTheHost() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let configuration = testConfiguration(trusting: server)
            let session = Session(configuration: configuration)
            _ = try await session.data(from: try localhost(server, policy))
            _ = try await session.data(
                from: try localhost(server, "/response-headers?Strict-Transport-Security=max-age%3D0"))
            #expect(configuration.hstsStore?.isKnown(host: "localhost") == false)
        }
    }

    @Test func ephemeralSessions_doNotShareWhatTheyLearn() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let first = testConfiguration(trusting: server)
            _ = try await Session(configuration: first).data(from: try localhost(server, policy))
            let second = testConfiguration(trusting: server)
            #expect(second.hstsStore?.isKnown(host: "localhost") == false)
        }
    }

    @Test func storeOnDisk_keepsHostsAcrossProcesses_inAPrivateFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hsts-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("hsts.json")
        let store = HSTSStore(persistingTo: file)
        store.learn("max-age=3600; includeSubDomains", from: "example.test")
        store.flush()
        #expect(store.fileProblem == nil)
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let reopened = HSTSStore(persistingTo: file)
        #expect(reopened.isKnown(host: "example.test"))
        #expect(reopened.isKnown(host: "api.example.test"))
    }

    @Test func damagedFile_leavesTheStoreEmpty_andSaysWhy() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("hsts-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data("not json".utf8), attributes: [.posixPermissions: 0o600]))
        let store = HSTSStore(persistingTo: file)
        #expect(store.fileProblem?.contains("does not decode") == true)
        #expect(!store.isKnown(host: "example.test"))
    }

    @Test(arguments: [
        ("max-age=60", true, false),
        ("MAX-AGE=\"60\"; includeSubDomains", true, true),
        ("max-age=60; includesubdomains; preload", true, true),
        ("includeSubDomains", false, false),
        ("max-age=60; max-age=70", false, false),
        ("max-age=-1", false, false),
        ("max-age=abc", false, false),
    ])
    func policyHeader_parsesAsRFC6797Says(value: String, valid: Bool, subdomains: Bool) {
        let store = HSTSStore()
        store.learn(value, from: "example.test")
        #expect(store.isKnown(host: "example.test") == valid)
        #expect(store.isKnown(host: "www.example.test") == subdomains)
    }
}

extension HSTSStore {
    /// What an https response from `host` with this field value teaches.
    func learn(_ value: String, from host: String) {
        // Through the public path a response takes: a task would call the
        // same internal method with the response's URL.
        noteForTesting(value, host: host)
    }
}
