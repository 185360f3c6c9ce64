import Foundation
import LoopbackServer
import Testing
import TestSupport

/// fetch's --resolve, --connect-to, --unix-socket, --interface, -4 and -6,
/// with curl's syntax (issue 55).
@Suite struct FetchReachTests {
    @Test func resolve_reachesTheTLSServerByAnotherName() async throws {
        let fetch = try fetchExecutablePath()
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let pem = "/tmp/aus-fetch-\(getpid())-\(server.port).pem"
            try #require(server.certificatePEM).write(to: URL(fileURLWithPath: pem))
            defer { unlink(pem) }
            let result = try await ChildProcess.run(fetch, [
                "-s", "--cacert", pem, "--resolve", "localhost:\(server.port):127.0.0.1",
                "https://localhost:\(server.port)/bytes/7",
            ])
            #expect(result.status == 0, "\(result.errorText)")
            #expect(result.output.count == 7)
            // A name the certificate does not list still fails verification.
            let wrong = try await ChildProcess.run(fetch, [
                "-s", "--cacert", pem, "--connect-to", "api.example.test:443:127.0.0.1:\(server.port)",
                "https://api.example.test/bytes/7",
            ])
            #expect(wrong.status != 0)
            #expect(wrong.errorText.contains("api.example.test"), "\(wrong.errorText)")
        }
    }

    @Test func unixSocket_andLocalSide() async throws {
        let fetch = try fetchExecutablePath()
        let path = "/tmp/aus-fetch-\(getpid()).sock"
        try await withServer(LoopbackServer.Options(unixSocketPath: path)) { server in
            let result = try await ChildProcess.run(fetch, ["-s", "--unix-socket", path, "http://localhost/bytes/5"])
            #expect(result.status == 0, "\(result.errorText)")
            #expect(result.output.count == 5)
        }
        try await withServer { server in
            let bound = try await ChildProcess.run(fetch, ["-s", "-4", "--interface", "127.0.0.1", server.url("/bytes/3").absoluteString])
            #expect(bound.status == 0, "\(bound.errorText)")
            #expect(bound.output.count == 3)
            let v6 = try await ChildProcess.run(fetch, ["-s", "-6", server.url("/bytes/3").absoluteString])
            #expect(v6.status != 0)
        }
    }

    @Test func malformedEntries_areRefusedNamingThem() async throws {
        let fetch = try fetchExecutablePath()
        let result = try await ChildProcess.run(fetch, ["--resolve", "example.com:443", "http://example.com/"])
        #expect(result.status != 0)
        #expect(result.errorText.contains("example.com:443"), "\(result.errorText)")
    }
}

/// `fetch --version` prints what the libcurl loaded at run time offers.
@Suite struct FetchVersionTests {
    @Test func version_printsLibcurlsProtocolsAndFeatures() async throws {
        let fetch = try fetchExecutablePath()
        let result = try await withTimeLimit(30) { try await ChildProcess.run(fetch, ["--version"]) }
        #expect(result.status == 0, "\(result.errorText)")
        let lines = result.outputText.split(separator: "\n")
        #expect(lines.first?.hasPrefix("fetch (AsyncURLSession) libcurl/") == true, "\(result.outputText)")
        let protocols = lines.first { $0.hasPrefix("Protocols: ") }?.split(separator: " ") ?? []
        #expect(protocols.contains("http") && protocols.contains("https"), "\(result.outputText)")
        let features = lines.first { $0.hasPrefix("Features: ") }?.split(separator: " ") ?? []
        #expect(features.contains("UnixSockets"), "\(result.outputText)")
    }
}
