import Foundation
import LoopbackServer
import Testing

/// HTTPS through the `curl` command line, trusting the server's generated certificate.
@Suite(.timeLimit(.scaledMinutes(1))) struct TLSTests {
    @Test(arguments: [true, false])
    func httpsServesBytes(http2: Bool) async throws {
        try await withServer(.init(tls: true, http2: http2)) { server in
            #expect(server.baseURL.absoluteString == "https://127.0.0.1:\(server.port)")
            let pem = try #require(server.certificatePEM)
            let caFile = try temporaryFile(pem, name: "ca.pem")
            defer { try? FileManager.default.removeItem(at: caFile) }

            let result = try await curl(
                ["--cacert", caFile.path, "--http2", "-w", "%{http_version}"],
                url: server.url("/bytes/300000")
            )
            #expect(result.exitCode == 0, "\(result.stderr)")
            #expect(result.writeOut == (http2 ? "2" : "1.1"))
            #expect(result.body == LoopbackServer.patternBody(count: 300_000))
        }
    }

    @Test func http2ServesEchoAndRange() async throws {
        try await withServer(.init(tls: true)) { server in
            let caFile = try temporaryFile(try #require(server.certificatePEM), name: "ca.pem")
            defer { try? FileManager.default.removeItem(at: caFile) }

            let echo = try await curl(
                ["--cacert", caFile.path, "--http2", "-w", "%{http_version}", "--data-binary", "abc"],
                url: server.url("/echo")
            )
            #expect(echo.exitCode == 0, "\(echo.stderr)")
            #expect(echo.writeOut == "2")
            let json = try #require(try JSONSerialization.jsonObject(with: echo.body) as? [String: Any])
            #expect(json["method"] as? String == "POST")
            #expect(json["bodySHA256"] as? String == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")

            let range = try await curl(
                ["--cacert", caFile.path, "--http2", "-w", "%{http_code}", "-r", "10-19"],
                url: server.url("/range/1000")
            )
            #expect(range.writeOut == "206")
            #expect(range.body == LoopbackServer.patternBody(count: 10, offset: 10))
        }
    }

    @Test(arguments: [LoopbackServer.CertificateKind.expired, .wrongHost])
    func badCertificatesAreRejected(kind: LoopbackServer.CertificateKind) async throws {
        try await withServer(.init(tls: true, certificate: kind)) { server in
            let caFile = try temporaryFile(try #require(server.certificatePEM), name: "ca.pem")
            defer { try? FileManager.default.removeItem(at: caFile) }
            let result = try await curl(["--cacert", caFile.path], url: server.url("/bytes/10"))
            // 60: the peer certificate cannot be authenticated with the given CA certificate.
            #expect(result.exitCode == 60, "\(result.stderr)")
        }
    }
}
