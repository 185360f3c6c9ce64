import AsyncURLSessionTesting
import Foundation
import LoopbackServer
import Testing
import TestSupport
import URLSessionCompat

/// Legacy code records its traffic with `URLSessionConfiguration.harRecorder`
/// and replays it in its tests through the core configuration.
@Suite struct HARClassicTests {
    private func load(_ session: URLSession, _ url: URL) async -> (String, Int, (any Error)?) {
        let outcome = Outcome<String>()
        session.dataTask(with: url) { data, response, error in
            outcome.set(String(decoding: data ?? Data(), as: UTF8.self), response, error)
        }.resume()
        let (text, response, error) = await outcome.value()
        return (text ?? "", (response as? HTTPURLResponse)?.statusCode ?? 0, error)
    }

    @Test func classicSession_recordsThenReplays() async throws {
        try await withServer { server in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("classic-\(UUID().uuidString).har")
            defer { try? FileManager.default.removeItem(at: file) }
            let configuration = URLSessionConfiguration.ephemeral
            let recorder = try HARRecorder(fileURL: file)
            configuration.harRecorder = recorder
            let url = server.url("/redirect/2")
            let (text, status, error) = await load(URLSession(configuration: configuration), url)
            #expect(error == nil && status == 200 && text == "done")
            #expect(recorder.entryCount == 3)
            recorder.close()
            let document = try HAR.Document.read(from: file)
            #expect(document.log.entries.map(\.response.status) == [302, 302, 200])

            let replaying = URLSessionConfiguration.ephemeral
            let replay = try HARReplay(contentsOf: file)
            replaying.sessionConfiguration.localTransport = replay
            let (again, againStatus, againError) = await load(URLSession(configuration: replaying), url)
            #expect(againError == nil && againStatus == 200 && again == "done")
            #expect(replay.answeredCount == 3)
        }
    }
}
