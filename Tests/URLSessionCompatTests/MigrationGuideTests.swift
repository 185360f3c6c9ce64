import Foundation
import LoopbackServer
import Testing
import TestSupport
import URLSessionCompat

@testable import MigrationGuideAfter
@testable import MigrationGuideAsync
@testable import MigrationGuideBefore

/// MIGRATION.md's code: every block is in Tests/MigrationGuide (so it
/// compiles), and the before, after and async versions do the same thing.
@Suite struct MigrationGuideTests {
    @Test func everyCodeBlockOfTheGuide_isInACompiledFile() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let guide = try String(contentsOf: root.appendingPathComponent("MIGRATION.md"), encoding: .utf8)
        let folder = root.appendingPathComponent("Tests/MigrationGuide")
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        // Blocks in the guide are dedented pieces of the files: compare lines
        // without their leading spaces.
        func unindented(_ text: String) -> String {
            text.split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.drop { $0 == " " } }.joined(separator: "\n")
        }
        let sources = try files.map { unindented(try String(contentsOf: $0, encoding: .utf8)) }
        let blocks = guide.components(separatedBy: "```swift\n").dropFirst().map {
            String($0.components(separatedBy: "```")[0])
        }
        #expect(blocks.count >= 8)
        for block in blocks {
            #expect(sources.contains { $0.contains(unindented(block)) }, "not in Tests/MigrationGuide:\n\(block)")
        }
    }

    @Test func tlsChallengeDelegate_trustsThePinnedSelfSignedServer() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let pin = "sha256//" + (try #require(server.publicKeySHA256))
            let session = URLSession(
                configuration: .ephemeral, delegate: TLSChallengeDelegate(expectedPin: pin), delegateQueue: nil)
            let (data, _) = try await session.data(from: server.url("/bytes/8"))
            #expect(data.count == 8)
            session.finishTasksAndInvalidate()
        }
    }

    @Test func tlsChallengeDelegate_refusesAnotherKey() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let session = URLSession(
                configuration: .ephemeral, delegate: TLSChallengeDelegate(expectedPin: "sha256//other"), delegateQueue: nil)
            await #expect(throws: URLError.self) { _ = try await session.data(from: server.url("/bytes/8")) }
            session.finishTasksAndInvalidate()
        }
    }

    @Test func step1_beforeAndAfter_loadTheSameBody() async throws {
        try await withServer { server in
            let url = server.url("/chunked/200000")
            let before = MigrationGuideBefore.LegacyClient()
            let after = MigrationGuideAfter.LegacyClient()
            let old = try await withCheckedThrowingContinuation { continuation in before.load(url) { continuation.resume(with: $0) } }
            let new = try await withCheckedThrowingContinuation { continuation in after.load(url) { continuation.resume(with: $0) } }
            #expect(old == LoopbackServer.patternBody(count: 200_000))
            #expect(new == old)
            let status = await withCheckedContinuation { continuation in
                after.fetchStatus(server.url("/status/404")) { continuation.resume(returning: $0) }
            }
            #expect(status == 404)
            before.close()
            after.close()
        }
    }

    @Test func boundStreamUpload_sendsTheWholeBody_throughAFourKiBPair() async throws {
        try await withServer { server in
            let body = LoopbackServer.patternBody(count: 1_000_000)
            let uploader = BoundStreamUploader(body: body)
            let echoed = try await withCheckedThrowingContinuation { continuation in
                uploader.upload(to: server.url("/echo-body")) { continuation.resume(with: $0) }
            }
            #expect(echoed == body)
        }
    }

    @Test func step2_completionHandler_andAsync_agree() async throws {
        try await withServer { server in
            let url = server.url("/status/201")
            let classic = await withCheckedContinuation { continuation in
                ClassicCalls.fetchStatus(of: url) { continuation.resume(returning: $0) }
            }
            let modern = try await AsyncCalls.fetchStatus(of: url)
            #expect(classic == 201 && modern == 201)
        }
    }

    @Test func step2_downloadWithProgress_classicAndAsync() async throws {
        try await withServer { server in
            let url = server.url("/bytes/3000000")
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("guide-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let classicFile = folder.appendingPathComponent("classic")
            let asyncFile = folder.appendingPathComponent("async")
            let error = await withCheckedContinuation { (continuation: CheckedContinuation<(any Error)?, Never>) in
                let downloader = ProgressDownloader(destination: classicFile) { continuation.resume(returning: $0) }
                let session = URLSession(
                    configuration: .default, delegate: downloader, delegateQueue: nil)
                session.downloadTask(with: url).resume()
                session.finishTasksAndInvalidate()
            }
            #expect(error == nil)
            var fractions: [Double] = []
            try await AsyncCalls.download(url, to: asyncFile) { fractions.append($0) }
            #expect(fractions.last == 1.0)
            #expect(try Data(contentsOf: classicFile) == Data(contentsOf: asyncFile))
        }
    }

    @Test func step2_redirectPolicy_classicAndAsync() async throws {
        try await withServer { server in
            let away = "http://localhost:\(server.port)/bytes/1"
            let url = server.url("/redirect-to?location=\(away)")
            let session = URLSession(
                configuration: .ephemeral, delegate: SameHostRedirects(), delegateQueue: nil)
            let (_, classic) = try await session.data(from: url)
            session.finishTasksAndInvalidate()
            let modern = try await AsyncCalls.fetchFollowingSameHostOnly(url)
            #expect((classic as? HTTPURLResponse)?.statusCode == 302)
            #expect(modern?.statusCode == 302)
        }
    }

    @Test func step2_authHandler_classicAndAsync() async throws {
        try await withServer { server in
            let url = server.url("/auth/digest?user=ann&password=pw")
            let session = URLSession(
                configuration: .ephemeral, delegate: PasswordProvider(user: "ann", password: "pw"), delegateQueue: nil)
            let (classic, _) = try await session.data(from: url)
            session.finishTasksAndInvalidate()
            let modern = try await AsyncCalls.fetch(url, user: "ann", password: "pw")
            #expect(String(decoding: classic, as: UTF8.self) == "authenticated as ann")
            #expect(modern == classic)
        }
    }

    @Test func resilience_refreshesTheTokenOnce_thenAcceptsWhatComes() async throws {
        try await withServer { server in
            let tokens = TokenStore(fresh: "fresh")
            let session = ResilientSession.make(tokens: tokens)
            defer { session.finishTasksAndInvalidate() }
            // /auth/basic answers a bearer token with 401 each time: one
            // refresh, one more attempt, then the 401 is the result.
            let (_, response) = try await session.data(from: server.url("/auth/basic?user=u&password=p"))
            #expect((response as? HTTPURLResponse)?.statusCode == 401)
            #expect(await tokens.current == "fresh")
            #expect(server.authorizationAttempts == 2)
        }
    }
}
