import Foundation
import LoopbackServer
import Testing

@testable import AsyncURLSession

/// Ending the consumption early cancels the transfer: a `break` out of
/// `for try await` over `events` or over `bytes(for:)`'s bytes, or an
/// iterator dropped before the end, even while the task itself is still held.
/// Bodies are above the high watermark, so a transfer left behind would stay
/// paused with its connection.
@Suite struct AbandonedIterationTests {
    private static let bodySize = 4_000_000

    @Test func breakOutOfEvents_whileTheTaskIsHeld_cancelsIt() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/bytes/\(Self.bodySize)"))
            task.resume()
            var received = 0
            for try await event in task.events {
                if case .data(let chunk) = event { received += chunk.count }
                if received > 0 { break }
            }
            #expect(await Self.becomesCompleted(task))
            #expect((task.error as? URLError)?.code == .cancelled)
            #expect(session.tasksInProgress == 0)
        }
    }

    @Test func droppedEventsIterator_whileTheTaskIsHeld_cancelsIt() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/bytes/\(Self.bodySize)"))
            task.resume()
            do {
                var iterator = task.events.makeAsyncIterator()
                _ = try await iterator.next()
            }
            #expect(await Self.becomesCompleted(task))
            #expect((task.error as? URLError)?.code == .cancelled)
        }
    }

    @Test func breakOutOfBytes_whileTheBytesAreHeld_cancelsTheTask() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let (bytes, _) = try await session.bytes(from: server.url("/bytes/\(Self.bodySize)"))
            var count = 0
            for try await _ in bytes {
                count += 1
                if count == 10 { break }
            }
            #expect(await Self.becomesCompleted(bytes.task))
            #expect((bytes.task.error as? URLError)?.code == .cancelled)
            #expect(session.tasksInProgress == 0)
        }
    }

    @Test func eventsIteratedToTheEnd_leaveTheTaskSucceeded() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/bytes/1000"))
            task.resume()
            var received = 0
            for try await event in task.events {
                if case .data(let chunk) = event { received += chunk.count }
            }
            #expect(received == 1000)
            #expect(task.state == .completed)
            #expect(task.error == nil)
        }
    }

    /// A streamed upload cancelled while its `needBodyStream` event waits
    /// unpulled: dropping that unanswered decision settles it, which must
    /// not happen under the task's lock (it crashed with "Recursive call to
    /// lock Mutex").
    @Test func cancelWhileABodyStreamDecisionIsQueued_completesCancelled() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            var request = URLRequest(url: server.url("/echo-body"))
            request.httpMethod = "POST"
            for _ in 0..<20 {
                let task = session.uploadTask(withStreamedRequest: request)
                task.resume()
                task.cancel()
                #expect(await Self.becomesCompleted(task))
                #expect((task.error as? URLError)?.code == .cancelled)
            }
        }
    }

    /// Polls (bounded): the engine ends a cancelled transfer on its thread.
    private static func becomesCompleted(_ task: SessionTask) async -> Bool {
        for _ in 0..<500 {
            if task.state == .completed { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return task.state == .completed
    }
}

/// 1xx responses other than 101 reach an events consumer before the final one.
@Suite struct InformationalResponseTests {
    @Test func earlyHints_comeAsAnEventBeforeTheResponse() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let task = session.dataTask(with: server.url("/status/103"))
            task.resume()
            var hints: [HTTPURLResponse] = []
            var kinds: [String] = []
            for try await event in task.events {
                switch event {
                case .informationalResponse(let response):
                    hints.append(response)
                    kinds.append("informational")
                case .response(let response, _): kinds.append("response \(response.statusCode)")
                default: break
                }
            }
            #expect(kinds == ["informational", "response 200"])
            #expect(hints.first?.statusCode == 103)
            #expect(hints.first?.value(forHTTPHeaderField: "Link") == "</style.css>; rel=preload; as=style")
        }
    }

    @Test func earlyHints_doNotDisturbACollectedBody() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let (data, response) = try await session.data(from: server.url("/status/103"))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(String(decoding: data, as: UTF8.self) == "status 103")
        }
    }
}
