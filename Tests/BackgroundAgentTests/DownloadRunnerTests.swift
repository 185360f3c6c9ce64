import AsyncURLSession
import AgentWire
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport
@testable import BackgroundAgent

/// The agent's downloads against the loopback server: to the end, resumed
/// from the journal after a stop that recorded nothing more (as a kill
/// does), restarted when the resource changed, retried after a network loss.
@Suite struct DownloadRunnerTests {
    /// A journal, a folder and a runner for one test; removed after.
    private struct Bench {
        let folder: URL
        let journal: AgentJournal
        let runner: DownloadRunner

        init(retry: RetrySchedule.Policy = .background(firstPause: 0.05, longestPause: 0.2, resourceTimeout: 60)) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("runner-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            journal = try AgentJournal(at: folder.appendingPathComponent("journal.sqlite"))
            var configuration = SessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = scaledTimeout(20)
            var runner = DownloadRunner(
                journal: journal, folder: folder, session: Session(configuration: configuration), retryPolicy: retry)
            runner.recordEvery = 16 << 10
            self.runner = runner
        }

        func add(_ url: URL) async throws -> Int64 {
            try await journal.add(
                session: "tests", task: Int.random(in: 1..<Int.max), kind: .download,
                request: BackgroundRequest(method: "GET", url: url.absoluteString)
            ).id
        }

        func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    /// The events a run reported, in order.
    private final class Recorder: Sendable {
        private let events = Mutex<[DownloadRunner.Event]>([])
        var all: [DownloadRunner.Event] { events.withLock { $0 } }
        func record(_ event: DownloadRunner.Event) { events.withLock { $0.append(event) } }
    }

    @Test func aDownload_finishes_andTheJournalNamesItsFile() async throws {
        try await withServer { server in
            let bench = try Bench()
            defer { bench.remove() }
            let id = try await bench.add(server.url("/range/300000"))
            let entry = try await bench.runner.run(id)
            #expect(entry.phase == .finished)
            #expect(entry.bytesOnDisk == 300_000 && entry.expectedBytes == 300_000)
            #expect(entry.validator.entityTag == "\"v1-300000\"")
            let file = try #require(entry.resultFile)
            #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == LoopbackServer.patternBody(count: 300_000))
            #expect(!FileManager.default.fileExists(atPath: bench.folder.appendingPathComponent("\(id).partial").path))
        }
    }

    /// The first run is stopped mid-body (the server stalls after 100,000
    /// bytes; the run is cancelled as a kill would stop it, recording
    /// nothing more); a new run resumes from the journal with Range.
    @Test func aStoppedDownload_resumesWithRange_fromTheJournal() async throws {
        try await withServer { server in
            let bench = try Bench()
            defer { bench.remove() }
            let id = try await bench.add(server.url("/range/300000?stallAfter=100000"))
            let first = Task { try await bench.runner.run(id) }
            // Bounded: the stall comes after 100,000 bytes, recorded in 16 KiB steps.
            for _ in 0..<400 {
                if let entry = try await bench.journal.entry(id: id), entry.bytesOnDisk >= 98_304 { break }
                try await Task.sleep(nanoseconds: 25_000_000)
            }
            first.cancel()
            let stopped = try await first.value
            #expect(stopped.phase == .running)
            let kept = stopped.bytesOnDisk
            #expect(kept >= 98_304 && kept <= 100_000)

            let recorder = Recorder()
            let entry = try await bench.runner.run(id) { recorder.record($0) }
            #expect(entry.phase == .finished)
            #expect(recorder.all.first == .resumed(offset: kept))
            let file = try #require(entry.resultFile)
            #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == LoopbackServer.patternBody(count: 300_000))
            #expect(entry.attempts == 2)
        }
    }

    /// The journal's validator is not the server's any more: If-Range gets
    /// the whole body, and the bytes kept before are dropped.
    @Test func aChangedValidator_startsTheFileAgain() async throws {
        try await withServer { server in
            let bench = try Bench()
            defer { bench.remove() }
            let id = try await bench.add(server.url("/range/200000"))
            let partial = bench.folder.appendingPathComponent("\(id).partial")
            try Data(repeating: 0xFF, count: 50_000).write(to: partial)
            try await bench.journal.recordProgress(
                id, bytesOnDisk: 50_000, expectedBytes: 200_000, validator: JournalValidator(entityTag: "\"old\""),
                partialFile: partial.path)
            let recorder = Recorder()
            let entry = try await bench.runner.run(id) { recorder.record($0) }
            #expect(entry.phase == .finished)
            #expect(recorder.all.first == .resumed(offset: 0))
            let file = try #require(entry.resultFile)
            #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == LoopbackServer.patternBody(count: 200_000))
        }
    }

    /// The connection drops after 64 KiB: the runner waits, then resumes
    /// where the flushed bytes end, and finishes.
    @Test func aLostConnection_isRetried_fromTheBytesOnDisk() async throws {
        try await withServer { server in
            let bench = try Bench()
            defer { bench.remove() }
            let id = try await bench.add(server.url("/range/200000?dropAfter=65536"))
            let recorder = Recorder()
            let entry = try await bench.runner.run(id) { recorder.record($0) }
            #expect(entry.phase == .finished)
            #expect(recorder.all.contains { if case .retrying(.networkConnectionLost, _) = $0 { true } else { false } })
            #expect(recorder.all.contains { if case .resumed(let offset) = $0 { offset > 0 } else { false } })
            let file = try #require(entry.resultFile)
            #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == LoopbackServer.patternBody(count: 200_000))
        }
    }

    /// Nobody listens: retried until the resource timeout, then failed with
    /// the network error named. (How many tries fit in the time depends on
    /// the machine's load; `RetrySchedule`'s tests count them.)
    @Test func anUnreachableServer_failsAtTheResourceTimeout() async throws {
        try await withTimeLimit {
            let reservation = try PortReservation()
            defer { reservation.release() }
            let bench = try Bench(retry: .background(firstPause: 0.05, longestPause: 0.1, resourceTimeout: 0.5))
            defer { bench.remove() }
            let id = try await bench.add(try #require(URL(string: "http://127.0.0.1:\(reservation.port)/")))
            let entry = try await bench.runner.run(id)
            #expect(entry.phase == .failed)
            #expect(entry.attempts >= 1)
            #expect(entry.failure?.contains("onnect") == true, "\(entry.failure ?? "no failure")")
        }
    }

    @Test func aSchemeOtherThanHTTP_failsWithoutTrying() async throws {
        let bench = try Bench()
        defer { bench.remove() }
        let id = try await bench.add(try #require(URL(string: "ftp://127.0.0.1/file")))
        let entry = try await bench.runner.run(id)
        #expect(entry.phase == .failed)
        #expect(entry.failure?.contains("not a URL the agent can load") == true)
    }
}
