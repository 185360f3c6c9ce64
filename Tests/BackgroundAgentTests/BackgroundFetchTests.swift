import Foundation
import LoopbackServer
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The agent as users meet it: `fetch --background` hands a download over
/// and exits; the agent (started on demand, in a folder of the test's own)
/// finishes it; killed mid-transfer, the next program to come back starts
/// it again and it resumes from its journal.
@Suite struct BackgroundFetchTests {
    @Test func aBackgroundDownload_arrivesAfterFetchHasExited() async throws {
        try await withServer(timeLimit: 90) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            let destination = sandbox.runtime.appendingPathComponent("file.bin")
            let started = try await sandbox.run(["--background", server.url("/range/2000000").absoluteString, "-o", destination.path])
            #expect(started.status == 0, "\(started.errorText)")
            #expect(started.outputText.contains("started in the background"))
            let status = try await sandbox.waitForStatus { $0.contains { $0.contains("delivered") } }
            defer { sandbox.stop(status.agent) }
            #expect(status.lines.count == 1)
            #expect(status.lines.first?.contains("delivered 2000000/2000000 bytes (100%)") == true, "\(status.lines)")
            #expect(try Data(contentsOf: destination) == LoopbackServer.patternBody(count: 2_000_000))
        }
    }

    /// Everything the agent keeps is private to the user.
    @Test func theAgentsFolderAndFiles_arePrivate() async throws {
        try await withServer(timeLimit: 90) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            let destination = sandbox.runtime.appendingPathComponent("small.bin")
            _ = try await sandbox.run(["--background", server.url("/range/1000").absoluteString, "-o", destination.path])
            let status = try await sandbox.waitForStatus { $0.contains { $0.contains("delivered") } }
            defer { sandbox.stop(status.agent) }
            let expected: [(String, mode_t)] = [
                ("", 0o700), ("transfers", 0o700), ("journal.sqlite", 0o600), ("journal.sqlite-wal", 0o600),
                ("agent.sock", 0o600), ("agent.log", 0o600), ("agent.lock", 0o600),
            ]
            for (name, mode) in expected {
                var info = stat()
                let path = name.isEmpty ? sandbox.folder.path : sandbox.folder.appendingPathComponent(name).path
                try #require(lstat(path, &info) == 0, "\(path) is missing")
                #expect(info.st_mode & 0o777 == mode, "\(name): \(String(info.st_mode & 0o777, radix: 8))")
                #expect(info.st_uid == getuid())
            }
        }
    }

    /// The server sends 2.5 of 3 MB and stalls (whole-body requests only;
    /// a Range request is served in full). The agent is killed (SIGKILL)
    /// with 2 MiB recorded; the next `fetch --background-status` starts a new
    /// agent, which resumes from the journal with Range and finishes: a
    /// restart from nothing would stall again.
    @Test func aKilledAgent_resumesFromItsJournal_whenAProgramComesBack() async throws {
        try await withServer(timeLimit: 90) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            let destination = sandbox.runtime.appendingPathComponent("resumed.bin")
            let url = server.url("/range/3000000?stallAfter=2500000").absoluteString
            let started = try await sandbox.run(["--background", url, "-o", destination.path])
            try #require(started.status == 0, "\(started.errorText)")
            // Progress is recorded per mebibyte or so (at the first chunk past each).
            let stalled = try await sandbox.waitForStatus { ($0.first.flatMap(Self.bytesOnDisk) ?? 0) >= 2 << 20 }
            let kept = try #require(stalled.lines.first.flatMap(Self.bytesOnDisk), "\(stalled.lines)")
            try #require(kept >= 2 << 20 && kept <= 2_500_000, "\(stalled.lines)")
            try #require(stalled.lines.first?.contains("running") == true, "\(stalled.lines)")
            try #require(stalled.agent > 0)
            kill(stalled.agent, SIGKILL)
            // The killed agent's socket is still there; nobody answers it.
            let resumed = try await sandbox.waitForStatus { $0.contains { $0.contains("delivered") } }
            defer { sandbox.stop(resumed.agent) }
            #expect(resumed.agent != stalled.agent)
            #expect(resumed.lines.first?.contains("delivered 3000000/3000000") == true, "\(resumed.lines)")
            #expect(try Data(contentsOf: destination) == LoopbackServer.patternBody(count: 3_000_000))
            let log = (try? String(contentsOf: sandbox.folder.appendingPathComponent("agent.log"), encoding: .utf8)) ?? ""
            #expect(log.contains("from \(kept) bytes"), "\(log)")
        }
    }

    /// The bytes on disk of a status line ("#1 running 2113364/3000000 bytes ...").
    private static func bytesOnDisk(_ line: String) -> Int? {
        let fields = line.split(separator: " ")
        guard fields.count > 2 else { return nil }
        return Int(fields[2].split(separator: "/").first ?? "")
    }

    @Test func aSchemeOtherThanHTTP_isRefused_sayingWhy() async throws {
        let sandbox = try AgentSandbox()
        defer { sandbox.remove() }
        let result = try await sandbox.run(["--background", "ftp://127.0.0.1/file", "-o", sandbox.runtime.appendingPathComponent("x").path])
        #expect(result.status != 0)
        #expect(result.errorText.contains("http"), "\(result.errorText)")
        let status = try? await sandbox.status()
        if let status { sandbox.stop(status.agent) }
    }
}
