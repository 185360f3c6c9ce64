import AsyncURLSession
import Foundation
import LoopbackServer
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A compressed body may not decode without bound (hostile-server finding 2:
/// a gzip bomb grew a completion handler's memory past 512 MiB in a
/// second). /gzip-bomb/N sends N zeros at about 159:1, above the default
/// ratio of 100 once 8 MiB have come out.
@Suite struct DecompressionLimitTests {
    private static let bomb = "/gzip-bomb/\(256 << 20)"

    private func expectBombError(_ error: (any Error)?) {
        let urlError = error as? URLError
        #expect(urlError?.code == .cannotDecodeContentData, "\(String(describing: error))")
        #expect(urlError?.localizedDescription.contains("maximumDecompressionRatio") == true)
    }

    @Test func bomb_failsDataFor_withAnErrorThatSaysWhichLimit() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            do {
                _ = try await session.data(from: server.url(Self.bomb))
                Issue.record("the bomb decoded whole")
            } catch {
                expectBombError(error)
            }
        }
    }

    @Test func bomb_failsAnEventsConsumer() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url(Self.bomb))
            task.resume()
            let recorded = await record(task)
            expectBombError(recorded.error)
            #expect(recorded.body.count <= 16 << 20)
        }
    }

    @Test func bomb_failsADownload() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            do {
                let (file, _) = try await session.download(from: server.url(Self.bomb))
                try? FileManager.default.removeItem(at: file)
                Issue.record("the bomb was written whole")
            } catch {
                expectBombError(error)
            }
        }
    }

    @Test func smallCompressedBody_belowTheFloor_decodesWhole() async throws {
        try await withServer { server in
            let (data, _) = try await Session(configuration: testConfiguration()).data(from: server.url("/gzip-bomb/1000000"))
            #expect(data == Data(count: 1_000_000))
        }
    }

    @Test func ratioZero_turnsTheCheckOff() async throws {
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.maximumDecompressionRatio = 0
            let (data, _) = try await Session(configuration: configuration).data(from: server.url("/gzip-bomb/\(20 << 20)"))
            #expect(data.count == 20 << 20)
        }
    }

    @Test func higherRatio_letsALegitimatelyCompressibleBodyThrough() async throws {
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.maximumDecompressionRatio = 1000
            let (data, _) = try await Session(configuration: configuration).data(from: server.url("/gzip-bomb/\(20 << 20)"))
            #expect(data.count == 20 << 20)
        }
    }
}
