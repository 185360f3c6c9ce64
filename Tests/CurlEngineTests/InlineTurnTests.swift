import Foundation
import Testing

@testable import CurlEngine

/// A transfer started while its engine thread sleeps with nothing in flight
/// runs its first turn on the starting thread; the sleeping thread must still
/// wake for the transfer's deadlines, which it did not know when it went to
/// sleep. Runs on a private engine thread, so no other test's transfer keeps
/// it awake.
@Suite struct InlineTurnTests {
    @Test func startedInline_onAReusedConnection_idleTimeoutStillFires() async throws {
        try await onOwnThread {
            let engine = PrivateShard()
            // Answers the first request on its connection, never the ones after.
            let server = try ScriptedServer { $0 == 1 ? .after(seconds: 0) : .never }
            defer { server.close() }

            // The first request opens the connection and is answered.
            let first = CompletionRecorder()
            engine.startGET(server.url, idleTimeout: 10, delegate: first)
            #expect(first.wait(seconds: 10).map { $0.error == nil } == true)

            // The second goes out on that connection from an inline turn: once
            // it is sent, no socket event will come, so only the timer the turn
            // armed wakes the sleeping thread for the idle timeout.
            #expect(PrivateShard.waitUntil(seconds: 5) { engine.commands.sleepsIdle }, "the engine thread went to sleep with nothing in flight")
            let inlineBefore = engine.commands.inlineTurnsRun.load(ordering: .relaxed)
            let second = CompletionRecorder()
            let started = Date()
            engine.startGET(server.url, idleTimeout: 0.3, delegate: second)
            #expect(engine.commands.inlineTurnsRun.load(ordering: .relaxed) == inlineBefore + 1, "the start ran on this thread")
            let outcome = second.wait(seconds: 10)
            #expect(outcome?.error?.code == .timedOut)
            #expect(Date().timeIntervalSince(started) >= 0.3)
            #expect(server.requestsSeen == 2, "the second request was sent on the reused connection")
        }
    }
}
