import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Testing

/// Servers that require a client certificate: the configuration's identity.
@Suite struct ClientCertificateTests {
    private let options = LoopbackServer.Options(tls: true, requireClientCertificate: true)

    private func identity(of server: LoopbackServer) throws -> ClientIdentity {
        let pem = try #require(server.clientIdentityPEM)
        return .pem(certificate: pem.certificate, privateKey: pem.privateKey)
    }

    /// The code depends on whether OpenSSL read the server's alert before
    /// the connection closed (a race the server's timing decides), so the
    /// test asks only that the task fails, as a connection-level error.
    @Test func withoutAnIdentity_fails() async throws {
        try await withServer(options) { server in
            let error = await #expect(throws: URLError.self) {
                _ = try await Session(configuration: testConfiguration(trusting: server)).data(from: server.url("/bytes/3"))
            }
            #expect([.clientCertificateRequired, .networkConnectionLost, .secureConnectionFailed].contains(error?.code))
        }
    }

    @Test func configurationIdentity_isPresented() async throws {
        try await withServer(options) { server in
            var configuration = testConfiguration(trusting: server)
            configuration.clientIdentity = try identity(of: server)
            let (data, _) = try await Session(configuration: configuration).data(from: server.url("/bytes/3"))
            #expect(data.count == 3)
        }
    }

    @Test func identityTheServerDoesNotTrust_isRejected() async throws {
        try await withServer(options) { server in
            // Another server's identity: a certificate this one never issued.
            let stranger = try await LoopbackServer.start(options)
            let foreign = try identity(of: stranger)
            try await stranger.shutdown()
            var configuration = testConfiguration(trusting: server)
            configuration.clientIdentity = foreign
            let error = await #expect(throws: URLError.self) {
                _ = try await Session(configuration: configuration).data(from: server.url("/bytes/3"))
            }
            #expect([.clientCertificateRejected, .networkConnectionLost, .secureConnectionFailed].contains(error?.code))
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")))
    func pkcs12Archive_withAPassword_isPresented() async throws {
        try await withServer(options) { server in
            let pem = try #require(server.clientIdentityPEM)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("p12-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            try pem.certificate.write(to: folder.appendingPathComponent("cert.pem"))
            try pem.privateKey.write(to: folder.appendingPathComponent("key.pem"))
            // The archive as users get one: made by openssl, password-protected.
            let openssl = try await ChildProcess.run(
                "/usr/bin/openssl",
                ["pkcs12", "-export", "-in", "cert.pem", "-inkey", "key.pem", "-passout", "pass:secret", "-out", "id.p12"],
                workingDirectory: folder.path)
            #expect(openssl.status == 0, "\(openssl.errorText)")
            let archive = try Data(contentsOf: folder.appendingPathComponent("id.p12"))
            var configuration = testConfiguration(trusting: server)
            configuration.clientIdentity = .pkcs12(archive, password: "secret")
            let (data, _) = try await Session(configuration: configuration).data(from: server.url("/bytes/2"))
            #expect(data.count == 2)
        }
    }
}
