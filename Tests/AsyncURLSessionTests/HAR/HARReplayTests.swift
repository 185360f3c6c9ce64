import AsyncURLSession
import AsyncURLSessionTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Testing

/// `HARReplay`: what was recorded answers again, without the server; a
/// browser's HAR too.
@Suite struct HARReplayTests {
    private static let chromeFixture = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("HARFixtures/chrome-shop.har")

    /// What a test compares of a `data(for:)` result.
    private struct Outcome: Equatable {
        let status: Int
        let contentType: String?
        let body: Data
    }

    private static func outcome(_ session: Session, _ url: URL) async throws -> Outcome {
        let (data, response) = try await session.data(for: URLRequest(url: url))
        let http = try #require(response as? HTTPURLResponse)
        return Outcome(status: http.statusCode, contentType: http.value(forHTTPHeaderField: "Content-Type"), body: data)
    }

    @Test func recordedRedirectsChunkedAndGzip_replayAsLive() async throws {
        try await withServer { server in
            try await withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent("live.har")
                let paths = ["/redirect/3", "/chunked/20000?chunk=1000", "/gzip/5000", "/status/404", "/bytes/0"]
                var recording = SessionConfiguration.ephemeral
                let recorder = try HARRecorder(fileURL: file)
                recording.harRecorder = recorder
                let live = Session(configuration: recording)
                var expected: [Outcome] = []
                for path in paths { expected.append(try await Self.outcome(live, server.url(path))) }
                recorder.close()
                #expect(expected[2].body == LoopbackServer.patternBody(count: 5000))

                let replay = try HARReplay(contentsOf: file)
                #expect(replay.entries.count == 8)
                var replaying = SessionConfiguration.ephemeral
                replaying.localTransport = replay
                let session = Session(configuration: replaying)
                for (path, outcome) in zip(paths, expected) {
                    #expect(try await Self.outcome(session, server.url(path)) == outcome, "\(path)")
                }
                // Every hop came from the file, the redirects too.
                #expect(replay.answeredCount == 8)
            }
        }
    }

    @Test func chromeHAR_replays_inOrder_thenTheLastAgain() async throws {
        try await withTimeLimit {
            let replay = try HARReplay(contentsOf: Self.chromeFixture)
            var configuration = SessionConfiguration.ephemeral
            configuration.localTransport = replay
            let session = Session(configuration: configuration)
            let cart = URL(string: "https://shop.example.com/api/cart?currency=EUR")!
            let first = try await session.data(for: URLRequest(url: cart))
            let firstResponse = try #require(first.1 as? HTTPURLResponse)
            #expect(String(decoding: first.0, as: UTF8.self) == #"{"items":[],"total":0}"#)
            #expect(firstResponse.value(forHTTPHeaderField: "x-request-id") == "a1")
            // The recorded br encoding and length described the wire, not this body.
            #expect(firstResponse.value(forHTTPHeaderField: "Content-Encoding") == nil)
            #expect(firstResponse.value(forHTTPHeaderField: "Content-Length") == String(first.0.count))

            var post = URLRequest(url: URL(string: "https://shop.example.com/api/cart/items")!)
            post.httpMethod = "POST"
            post.httpBody = Data(#"{"sku":"book-1"}"#.utf8)
            let (created, createdResponse) = try await session.data(for: post)
            #expect((createdResponse as? HTTPURLResponse)?.statusCode == 201)
            #expect(String(decoding: created, as: UTF8.self) == #"{"id":7}"#)

            for _ in 0..<2 {
                let (again, response) = try await session.data(for: URLRequest(url: cart))
                #expect(String(decoding: again, as: UTF8.self) == #"{"items":[7],"total":12}"#)
                #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "x-request-id") == "a2")
            }
            let (logo, logoResponse) = try await session.data(for: URLRequest(url: URL(string: "https://shop.example.com/img/logo.png")!))
            #expect(logo.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
            #expect(logo.count == 18)
            #expect((logoResponse as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") == "image/png")
            // A recorded redirect is followed to its recorded target.
            let (moved, movedResponse) = try await session.data(for: URLRequest(url: URL(string: "https://shop.example.com/old-page")!))
            #expect(movedResponse.url == cart)
            #expect(String(decoding: moved, as: UTF8.self) == #"{"items":[7],"total":12}"#)
        }
    }

    @Test func unmatchedRequest_failsNamingTheNearestEntry() async throws {
        try await withTimeLimit {
            var configuration = SessionConfiguration.ephemeral
            configuration.localTransport = try HARReplay(contentsOf: Self.chromeFixture)
            let session = Session(configuration: configuration)
            let error = await #expect(throws: URLError.self) {
                _ = try await session.data(for: URLRequest(url: URL(string: "https://shop.example.com/api/carts")!))
            }
            #expect(error?.code == .unsupportedURL)
            let message = error?.localizedDescription ?? ""
            #expect(message.contains("GET https://shop.example.com/api/carts"), "\(message)")
            #expect(message.contains("The nearest: GET https://shop.example.com/api/cart?currency=EUR"), "\(message)")
            #expect(message.contains("chrome-shop.har"), "\(message)")
        }
    }

    @Test func chosenHeadersAndBody_mustMatch() async throws {
        try await withTimeLimit {
            var configuration = SessionConfiguration.ephemeral
            configuration.localTransport = try HARReplay(
                contentsOf: Self.chromeFixture,
                options: HARReplay.Options(matchedHeaderNames: ["Accept"], matchesBody: true))
            let session = Session(configuration: configuration)
            var post = URLRequest(url: URL(string: "https://shop.example.com/api/cart/items")!)
            post.httpMethod = "POST"
            post.setValue("application/json", forHTTPHeaderField: "Accept")
            post.httpBody = Data(#"{"sku":"book-2"}"#.utf8)
            let error = await #expect(throws: URLError.self) { _ = try await session.data(for: post) }
            #expect(error?.localizedDescription.contains("differs in the headers or body") == true)
            post.httpBody = Data(#"{"sku":"book-1"}"#.utf8)
            let (_, response) = try await session.data(for: post)
            #expect((response as? HTTPURLResponse)?.statusCode == 201)
        }
    }

    @Test func recordedTimings_delayTheAnswer() async throws {
        try await withTimeLimit {
            var configuration = SessionConfiguration.ephemeral
            configuration.localTransport = try HARReplay(
                contentsOf: Self.chromeFixture, options: HARReplay.Options(replaysTimings: true))
            let clock = ContinuousClock()
            let start = clock.now
            _ = try await Session(configuration: configuration).data(
                for: URLRequest(url: URL(string: "https://shop.example.com/img/logo.png")!))
            // blocked 2.113 + send 0.201 + wait 44.8 + receive 1.097 ms.
            #expect(clock.now - start >= .milliseconds(45))
        }
    }

    @Test func once_recordsWithoutAFile_thenReplaysIt() async throws {
        try await withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("once.har")
            let url = try await withServer { server -> URL in
                var configuration = SessionConfiguration.ephemeral
                let cassette = try HARReplay.once(file, configuration: &configuration)
                #expect(cassette.isRecording)
                let (data, _) = try await Session(configuration: configuration).data(for: URLRequest(url: server.url("/redirect/1")))
                #expect(String(decoding: data, as: UTF8.self) == "done")
                if case .recording(let recorder) = cassette { recorder.close() }
                return server.url("/redirect/1")
            }
            // The server is gone: only the file answers now.
            try await withTimeLimit {
                var configuration = SessionConfiguration.ephemeral
                let cassette = try HARReplay.once(file, configuration: &configuration)
                #expect(!cassette.isRecording)
                let (data, response) = try await Session(configuration: configuration).data(for: URLRequest(url: url))
                #expect(String(decoding: data, as: UTF8.self) == "done")
                #expect(response.url?.path == "/redirect/0")
            }
        }
    }
}
