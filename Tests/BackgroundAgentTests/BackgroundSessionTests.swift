import AgentWire
import AsyncURLSession
import Foundation
import LoopbackServer
import Testing
import TestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Background sessions as programs use them: `SessionConfiguration.background(identifier:)`,
/// tasks run by the agent (started on demand, in the test's own folder),
/// events as a foreground task's, and a program that comes back for what
/// an earlier one left.
@Suite struct BackgroundSessionTests {
    /// What a task's events said, in order.
    private struct Outcome {
        var response: HTTPURLResponse?
        var progress: [TransferProgress] = []
        var file: Data?
        var body = Data()
        var error: (any Error)?
    }

    private static func outcome(of task: SessionTask) async -> Outcome {
        var outcome = Outcome()
        do {
            for try await event in task.events {
                switch event {
                case .response(let response, _): outcome.response = response
                case .downloadProgress(let step): outcome.progress.append(step)
                case .downloaded(let url): outcome.file = try Data(contentsOf: url)
                case .data(let bytes): outcome.body.append(bytes)
                default: break
                }
            }
        } catch {
            outcome.error = error
        }
        return outcome
    }

    @Test func aDownload_runsInTheAgent_andItsTaskGetsTheFile() async throws {
        try await withServer(timeLimit: 90) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            defer { sandbox.stopAgent() }
            let task = Session(configuration: sandbox.configuration("one")).downloadTask(with: server.url("/range/3000000"))
            task.resume()
            let outcome = await Self.outcome(of: task)
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            #expect(outcome.response?.statusCode == 200)
            #expect(outcome.response?.value(forHTTPHeaderField: "ETag") == "\"v1-3000000\"")
            #expect(outcome.file == LoopbackServer.patternBody(count: 3_000_000))
            #expect(outcome.progress.last?.totalBytes == 3_000_000)
            // Handed over: the agent keeps nothing of it.
            let left = try AgentClient(folder: AgentFolder(url: sandbox.folder), agentExecutable: nil).send(.status)
            #expect(left == .status(agentProcess: Self.agentProcess(left), transfers: []), "\(left)")
        }
    }

    private static func agentProcess(_ reply: AgentReply) -> Int32 {
        if case .status(let agent, _) = reply { return agent }
        return -1
    }

    /// As programs write it: the session and the task made inline, resumed,
    /// never held. The transfer runs to its end in the agent (not cancelled
    /// when the task's last reference goes, as a foreground task would be).
    @Test func aTaskNobodyHolds_runsToItsEnd() async throws {
        try await withServer(timeLimit: 90) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            defer { sandbox.stopAgent() }
            Session(configuration: sandbox.configuration("unheld")).downloadTask(with: server.url("/range/2000000")).resume()
            let log = sandbox.folder.appendingPathComponent("agent.log")
            var text = ""
            // Bounded: the agent logs the end within a moment on loopback.
            for _ in 0..<Int(300 * testTimeScale) where !text.contains("finished") && !text.contains("cancelled") {
                try await Task.sleep(nanoseconds: 50_000_000)
                text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            }
            #expect(text.contains("transfer 1 finished: 2000000 bytes"), "\(text)")
            #expect(!text.contains("cancelled"), "\(text)")
        }
    }

    @Test func aSecondLiveSessionWithTheSameIdentifier_isRefusedSayingWhoHoldsIt() async throws {
        let sandbox = try AgentSandbox()
        defer { sandbox.remove() }
        defer { sandbox.stopAgent() }
        let first = Session(configuration: sandbox.configuration("shared-id"))
        let second = Session(configuration: sandbox.configuration("shared-id"))
        do {
            for try await _ in second.backgroundEvents {}
            Issue.record("the second session was not refused")
        } catch let error as URLError {
            #expect(error.code == .backgroundSessionInUseByAnotherProcess)
            #expect(error.localizedDescription.contains("in use by process \(getpid())"), "\(error.localizedDescription)")
        }
        let task = second.downloadTask(with: URL(string: "http://127.0.0.1:9/never")!)
        task.resume()
        let outcome = await Self.outcome(of: task)
        #expect((outcome.error as? URLError)?.code == .backgroundSessionInUseByAnotherProcess)
        // The first still holds it; once it is gone, the identifier is free.
        _ = first
    }

    @Test func theIdentifier_isFreeAgain_onceItsSessionIsGone() async throws {
        let sandbox = try AgentSandbox()
        defer { sandbox.remove() }
        defer { sandbox.stopAgent() }
        do {
            let first = Session(configuration: sandbox.configuration("reused"))
            for try await _ in first.backgroundEvents {}
        }
        // The agent hears the close on its next look (every 250 ms): bounded retries.
        var refused = true
        for _ in 0..<40 where refused {
            let again = Session(configuration: sandbox.configuration("reused"))
            do {
                for try await _ in again.backgroundEvents {}
                refused = false
            } catch {
                try await Task.sleep(nanoseconds: 100_000_000)
            }
        }
        #expect(!refused)
    }

    @Test func aDataUpload_isRefused_sayingToUseAFile() async throws {
        try await withServer(timeLimit: 60) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            defer { sandbox.stopAgent() }
            let session = Session(configuration: sandbox.configuration("uploads"))
            let task = session.uploadTask(with: URLRequest(url: server.url("/echo-body")), from: Data("hello".utf8))
            task.resume()
            let outcome = await Self.outcome(of: task)
            let error = try #require(outcome.error as? URLError)
            #expect(error.localizedDescription.contains("uploadTask(with:fromFile:)"), "\(error.localizedDescription)")
        }
    }

    @Test func anUploadFromAFile_runsInTheAgent_andItsTaskGetsTheResponseBody() async throws {
        try await withServer(timeLimit: 60) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            defer { sandbox.stopAgent() }
            let body = sandbox.runtime.appendingPathComponent("upload.bin")
            try LoopbackServer.patternBody(count: 200_000).write(to: body)
            let session = Session(configuration: sandbox.configuration("uploads"))
            let task = session.uploadTask(with: URLRequest(url: server.url("/echo-body")), fromFile: body)
            task.resume()
            let outcome = await Self.outcome(of: task)
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            #expect(outcome.response?.statusCode == 200)
            #expect(outcome.body == LoopbackServer.patternBody(count: 200_000))
        }
    }

    @Test func aCancelledTask_stopsItsTransferInTheAgent() async throws {
        try await withServer(timeLimit: 60) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            defer { sandbox.stopAgent() }
            let session = Session(configuration: sandbox.configuration("cancels"))
            let task = session.downloadTask(with: server.url("/range/3000000?stallAfter=1500000"))
            task.resume()
            var cancelled = false
            do {
                for try await event in task.events {
                    if case .downloadProgress = event, !cancelled {
                        cancelled = true
                        task.cancel()
                    }
                }
            } catch {
                #expect((error as? URLError)?.code == .cancelled)
            }
            #expect(cancelled)
            let client = AgentClient(folder: AgentFolder(url: sandbox.folder), agentExecutable: nil)
            // The cancel reaches the agent from another thread: bounded wait.
            var transfers: [BackgroundTransferStatus] = [BackgroundTransferStatus(
                id: 0, session: "", task: 0, url: "", phase: "", bytesOnDisk: 0, expectedBytes: 0, file: nil, failure: nil)]
            for _ in 0..<50 where !transfers.isEmpty {
                if case .status(_, let now) = try client.send(.status) { transfers = now }
                if !transfers.isEmpty { try await Task.sleep(nanoseconds: 100_000_000) }
            }
            #expect(transfers.isEmpty, "\(transfers)")
        }
    }

    /// The issue's test: a program starts a download in a background
    /// session and is killed, then the agent too (SIGKILL; the server
    /// stalls after 1.5 of 3 MB, so nothing ends on its own); the next
    /// agent resumes it from the journal with Range (served whole) while
    /// nobody holds the session; the next program with that identifier
    /// gets the task back, the file byte-identical, then `allEventsDelivered`.
    @Test func aKilledProgramsDownload_isHandedToTheNextProgramWithItsIdentifier() async throws {
        try await withServer(timeLimit: 120) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            defer { sandbox.stopAgent() }
            let url = try await Self.startThenKillProgramAndAgent(sandbox, server, session: "handover")
            // The status asks start a new agent, which resumes it and ends it while nobody holds the session.
            let ended = try await sandbox.waitForStatus { $0.first?.contains("finished") ?? false }
            try #require(ended.lines.first?.contains("finished") == true, "\(ended.lines)")
            let session = Session(configuration: sandbox.configuration("handover"))
            var tasks: [SessionTask] = []
            var delivered = false
            for try await event in session.backgroundEvents {
                switch event {
                case .reconnected(let task): tasks.append(task)
                case .allEventsDelivered: delivered = true
                }
            }
            #expect(delivered)
            let task = try #require(tasks.first)
            #expect(tasks.count == 1)
            #expect(task.originalRequest?.url?.absoluteString == url)
            let outcome = await Self.outcome(of: task)
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            #expect(outcome.response?.statusCode == 200)
            #expect(outcome.file == LoopbackServer.patternBody(count: 3_000_000))
        }
    }

    /// `fetch --session ID` starts a download of 3 MB that stalls after 1.5
    /// MB (whole-body requests only; a Range request is served whole); once
    /// a mebibyte is on disk, fetch is killed, then the agent (SIGKILL).
    /// Returns the URL.
    static func startThenKillProgramAndAgent(
        _ sandbox: AgentSandbox, _ server: LoopbackServer, session: String
    ) async throws -> String {
        let url = server.url("/range/3000000?stallAfter=1500000").absoluteString
        let child = Task {
            try await sandbox.run(["--session", session, url, "-o", sandbox.runtime.appendingPathComponent("never").path, "-s"])
        }
        let stalled = try await sandbox.waitForStatus { lines in
            // "#1 running 1048576/3000000 bytes ...".
            let fields = lines.first?.split(separator: " ") ?? []
            return fields.count > 2 && (Int(fields[2].split(separator: "/").first ?? "") ?? 0) >= 1 << 20
        }
        child.cancel()
        let killed = try await child.value
        #expect(killed.status != 0, "fetch ended on its own: \(killed.outputText) \(killed.errorText) \(stalled.lines)")
        try #require(stalled.agent > 0)
        kill(stalled.agent, SIGKILL)
        return url
    }

    /// As above, but the next program comes at once: its session starts the
    /// next agent, which resumes the transfer; the program gets it back
    /// running (or just ended) and follows it to its file.
    @Test func aKilledProgramsDownload_stillRunning_isFollowedByTheNextProgram() async throws {
        try await withServer(timeLimit: 120) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            defer { sandbox.stopAgent() }
            let url = try await Self.startThenKillProgramAndAgent(sandbox, server, session: "follow")
            let session = Session(configuration: sandbox.configuration("follow"))
            var tasks: [SessionTask] = []
            for try await event in session.backgroundEvents {
                if case .reconnected(let task) = event { tasks.append(task) }
            }
            let task = try #require(tasks.first)
            #expect(task.originalRequest?.url?.absoluteString == url)
            let outcome = await Self.outcome(of: task)
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            #expect(outcome.file == LoopbackServer.patternBody(count: 3_000_000))
        }
    }
}

extension BackgroundSessionTests {
    /// Sessions of several identifiers at once, one agent for all of them.
    @Test func manyIdentifiersAtOnce_eachGetItsOwnFile() async throws {
        try await withServer(timeLimit: 90) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            defer { sandbox.stopAgent() }
            let sizes = [100_000, 700_000, 1_300_000, 2_100_000]
            let files = await withTaskGroup(of: (Int, Data?).self) { group in
                for (index, size) in sizes.enumerated() {
                    group.addTask {
                        let session = Session(configuration: sandbox.configuration("many-\(index)"))
                        let task = session.downloadTask(with: server.url("/range/\(size)"))
                        task.resume()
                        return (size, await Self.outcome(of: task).file)
                    }
                }
                var files: [Int: Data?] = [:]
                for await (size, file) in group { files[size] = file }
                return files
            }
            for size in sizes {
                #expect(files[size] == LoopbackServer.patternBody(count: size), "size \(size)")
            }
        }
    }
}
