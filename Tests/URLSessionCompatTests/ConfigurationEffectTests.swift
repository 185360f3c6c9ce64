import Foundation
import LoopbackServer
import Testing
import TestSupport
import URLSessionCompat

/// Settings made on the classic `URLSessionConfiguration` reach the transfers
/// (each is applied by the core; these check the classic path to it).
@Suite struct ConfigurationEffectTests {
    @Test func timeoutIntervalForResource_endsATransferWhoseBytesStillFlow() async throws {
        try await withServer { server in
            let session = makeSession(nil) { $0.timeoutIntervalForResource = 1 }
            let error = await #expect(throws: URLError.self) {
                _ = try await session.data(from: server.url("/drip/100000?chunk=10&interval=50"))
            }
            #expect(error?.code == .timedOut)
            #expect(session.configuration.timeoutIntervalForResource == 1)
            session.invalidateAndCancel()
        }
    }

    @Test func httpMaximumRedirects_boundsTheChain() async throws {
        try await withServer { server in
            let session = makeSession(nil) { $0.httpMaximumRedirects = 2 }
            let error = await #expect(throws: URLError.self) {
                _ = try await session.data(from: server.url("/redirect/3"))
            }
            #expect(error?.code == .httpTooManyRedirects)
            let (data, _) = try await session.data(from: server.url("/redirect/2"))
            #expect(String(decoding: data, as: UTF8.self) == "done")
            session.invalidateAndCancel()
        }
    }

    @Test func tlsTrustRootsPEM_trustsTheGivenRootOnly() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let trusting = makeSession(nil) { $0.tlsTrustRootsPEM = server.certificatePEM }
            let (_, response) = try await trusting.data(from: server.url("/bytes/10"))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            trusting.invalidateAndCancel()

            // Verification stays on without it: the self-signed root is unknown.
            let plain = makeSession(nil)
            let error = await #expect(throws: URLError.self) {
                _ = try await plain.data(from: server.url("/bytes/10"))
            }
            #expect(error?.code == .serverCertificateUntrusted || error?.code == .serverCertificateHasUnknownRoot)
            plain.invalidateAndCancel()
        }
    }

    @Test func downloadDirectory_holdsTheDownloadedFile() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("compat-downloads-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withServer { server in
            let session = makeSession(nil) { $0.downloadDirectory = directory }
            let (file, _) = try await session.download(from: server.url("/bytes/1000"))
            defer { try? FileManager.default.removeItem(at: file) }
            #expect(file.deletingLastPathComponent().standardizedFileURL.path == directory.standardizedFileURL.path)
            #expect(fileSizeOf(file) == 1000)
            session.invalidateAndCancel()
        }
    }

    private func fileSizeOf(_ url: URL) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue
    }
}
