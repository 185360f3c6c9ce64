import Foundation
import LoopbackServer
import Testing

@testable import AsyncURLSession

#if canImport(Glibc)
import Glibc
#endif

/// Where credentials go by their persistence, and what default handling
/// answers with. Each test uses storages of its own (never the shared one).
@Suite struct CredentialStorageTests {
    private func configuration(_ storage: CredentialStorage) -> SessionConfiguration {
        var configuration = testConfiguration()
        configuration.credentialStorage = storage
        return configuration
    }

    private func space(_ server: LoopbackServer) -> URLProtectionSpace {
        URLProtectionSpace(
            host: "127.0.0.1", port: server.port, protocol: "http", realm: "loopback",
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
    }

    /// Answers every challenge once with `credential`.
    private final class Answering: SessionTaskDelegate {
        let credential: URLCredential
        init(_ credential: URLCredential) { self.credential = credential }
        func task(_ task: SessionTask, didReceive decision: ChallengeDecision) async {
            decision.useCredential(credential)
        }
    }

    private func status(_ session: Session, _ url: URL) async throws -> Int {
        let (_, response) = try await session.data(from: url)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    @Test func permanentAnswer_isKeptByTheStorage_andAnswersTheNextSession() async throws {
        try await withServer { server in
            let storage = CredentialStorage()
            let url = server.url("/auth/basic?user=u&password=p")
            let credential = URLCredential(user: "u", password: "p", persistence: .permanent)
            let first = Session(configuration: configuration(storage), delegate: Answering(credential))
            let status1 = try await status(first, url)
            #expect(status1 == 200)
            #expect(storage.allCredentials.values.first?["u"]?.password == "p")
            let status2 = try await status(Session(configuration: configuration(storage)), url)
            #expect(status2 == 200)
        }
    }

    @Test func forSessionAnswer_staysWithTheSession() async throws {
        try await withServer { server in
            let storage = CredentialStorage()
            let url = server.url("/auth/basic?user=u&password=p")
            let credential = URLCredential(user: "u", password: "p", persistence: .forSession)
            let first = Session(configuration: configuration(storage), delegate: Answering(credential))
            let status3 = try await status(first, url)
            #expect(status3 == 200)
            let status4 = try await status(first, url)
            #expect(status4 == 200)
            #expect(storage.allCredentials.isEmpty)
            let status5 = try await status(Session(configuration: configuration(storage)), url)
            #expect(status5 == 401)
        }
    }

    @Test func defaultCredentialOfTheStorage_answersDefaultHandling() async throws {
        try await withServer { server in
            let storage = CredentialStorage()
            storage.setDefaultCredential(URLCredential(user: "u", password: "p", persistence: .permanent), for: space(server))
            let session = Session(configuration: configuration(storage))
            let status6 = try await status(session, server.url("/auth/basic?user=u&password=p"))
            #expect(status6 == 200)
        }
    }

    @Test func urlUserAndPassword_answerOnce_andAreNotKept() async throws {
        try await withServer { server in
            let storage = CredentialStorage()
            var components = URLComponents(url: server.url("/auth/basic?user=u&password=p"), resolvingAgainstBaseURL: false)!
            components.user = "u"
            components.password = "p"
            let status7 = try await status(Session(configuration: configuration(storage)), components.url!)
            #expect(status7 == 200)
            #expect(storage.allCredentials.isEmpty)
        }
    }

    @Test func storageOnDisk_keepsPermanentCredentials_privately() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("credentials-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("credentials.json")
        let space = URLProtectionSpace(
            host: "Example.org", port: 443, protocol: "https", realm: "r", authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        do {
            let storage = CredentialStorage(persistingTo: file)
            storage.setDefaultCredential(URLCredential(user: "u", password: "p", persistence: .permanent), for: space)
            storage.set(URLCredential(user: "session", password: "s", persistence: .forSession), for: space)
            storage.flush()
            #expect(storage.fileProblem == nil)
        }
        var info = stat()
        #expect(lstat(file.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let reopened = CredentialStorage(persistingTo: file)
        #expect(reopened.defaultCredential(for: space)?.password == "p")
        #expect(reopened.credentials(for: space).keys.sorted() == ["u"])
    }

    @Test func corruptCredentialFile_isRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("credentials-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("credentials.json")
        _ = FileManager.default.createFile(atPath: file.path, contents: Data("{".utf8), attributes: [.posixPermissions: 0o600])
        let storage = CredentialStorage(persistingTo: file)
        #expect(storage.allCredentials.isEmpty)
        #expect(storage.fileProblem?.contains("does not decode") == true)
    }
}
