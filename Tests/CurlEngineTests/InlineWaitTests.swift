import TestSupport
import Foundation
import Glibc
import Synchronization
import Testing

@testable import CurlEngine

/// A caller about to park on the only transfer of a sleeping engine thread
/// waits for it on its own thread (`InlineWait`), and hands it back to the
/// engine thread when the time runs out or the engine thread has work.
/// Each test runs on a private engine thread, so no other test's transfer
/// is in flight on it.
@Suite struct InlineWaitTests {
    /// A first request opens the connection, so the requests under test are
    /// sent on a pooled one (the case of a request loop).
    private func warmedUp(_ engine: PrivateShard, _ server: ScriptedServer) {
        let first = CompletionRecorder()
        engine.startGET(server.url, delegate: first)
        #expect(first.wait(seconds: 10).map { $0.error == nil } == true)
    }

    /// Starts a GET by an inline turn (only such a transfer is waited for
    /// inline): once the engine thread sleeps idle, and again while a start
    /// found it awake (a loaded machine), each time after that transfer ended.
    private func startedInline(
        _ engine: PrivateShard, _ url: String, makeRecorder: () -> CompletionRecorder
    ) -> (TransferID, CompletionRecorder)? {
        for _ in 0..<10 {
            _ = PrivateShard.waitUntil(seconds: 5) { engine.commands.sleepsIdle }
            let before = engine.commands.inlineTurnsRun.load(ordering: .relaxed)
            let recorder = makeRecorder()
            let id = engine.startGET(url, delegate: recorder)
            if engine.commands.inlineTurnsRun.load(ordering: .relaxed) > before { return (id, recorder) }
            _ = recorder.wait(seconds: 10)
        }
        return nil
    }

    /// Waits inline, again while a wait cannot start because the engine
    /// thread is still awake (on a loaded machine it may not have gone back
    /// to sleep yet), for up to 5 s.
    private func waitInline(
        _ engine: PrivateShard, for id: TransferID, limit: UInt64, until isDone: () -> Bool
    ) -> InlineWait.End {
        let deadline = Date().addingTimeInterval(5)
        while true {
            let end = engine.commands.waitInline(for: id, limit: limit, until: isDone)
            if end != .notStarted || isDone() || Date() >= deadline { return end }
            usleep(1_000)
        }
    }

    @Test(.timeLimit(.scaledMinutes(1)))
    func aPromptResponse_isReadAndEnded_onTheWaitingThread() async throws {
        try await onOwnThread {
            let engine = PrivateShard()
            let server = try ScriptedServer { _ in .after(seconds: 0) }
            defer { server.close() }
            warmedUp(engine, server)

            // The answer comes at once, so on a loaded machine the engine thread
            // may read it before this thread starts waiting: a few tries.
            var ended: (InlineWait.End, pthread_t?) = (.notStarted, nil)
            for _ in 0..<10 where ended.0 != .done {
                let (id, transfer) = try #require(startedInline(engine, server.url) { CompletionRecorder() })
                let end = waitInline(engine, for: id, limit: 10_000_000_000) { transfer.hasCompleted }
                #expect(transfer.wait(seconds: 10).map { $0.error == nil } == true)
                ended = (end, transfer.completingThread)
            }
            #expect(ended.0 == .done)
            let thread = try #require(ended.1)
            #expect(pthread_equal(thread, pthread_self()) != 0, "the transfer ended on another thread")
        }
    }

    @Test(.timeLimit(.scaledMinutes(1)))
    func aSlowResponse_isHandedBackAtTheLimit_andTheEngineThreadReadsIt() async throws {
        try await onOwnThread {
            let engine = PrivateShard()
            let server = try ScriptedServer { $0 == 1 ? .after(seconds: 0) : .after(seconds: 0.5) }
            defer { server.close() }
            warmedUp(engine, server)

            let (id, transfer) = try #require(startedInline(engine, server.url) { CompletionRecorder() })
            let end = waitInline(engine, for: id, limit: 20_000_000) { transfer.hasCompleted }
            #expect(end == .timedOut)
            #expect(!transfer.hasCompleted, "the wait outlasted its limit")
            // The socket was given back to the engine thread's epoll set: without
            // that, nobody would read the answer and this would time out.
            #expect(transfer.wait(seconds: 10).map { $0.error == nil } == true)
            let thread = try #require(transfer.completingThread)
            #expect(pthread_equal(thread, pthread_self()) == 0, "ended on the thread whose wait had ended")
        }
    }

    @Test(.timeLimit(.scaledMinutes(1)))
    func aCommandDuringTheWait_endsIt_andTheEngineThreadRunsIt() async throws {
        try await onOwnThread {
            let engine = PrivateShard()
            let slow = try ScriptedServer { $0 == 1 ? .after(seconds: 0) : .after(seconds: 2) }
            defer { slow.close() }
            let prompt = try ScriptedServer { _ in .after(seconds: 0) }
            defer { prompt.close() }
            warmedUp(engine, slow)

            let (id, waited) = try #require(startedInline(engine, slow.url) { CompletionRecorder() })
            // Another thread starts a transfer while this one waits: a command
            // for the engine thread, which must not wait for this wait's end.
            // Soon after the wait starts: the engine thread's idle sweep fires
            // its timer 250 ms after the start above, which ends a wait too.
            let other = CompletionRecorder()
            let waiting = Atomic<Bool>(false)
            let starter = Thread {
                _ = PrivateShard.waitUntil(seconds: 10) { waiting.load(ordering: .relaxed) }
                usleep(20_000)
                engine.startGET(prompt.url, delegate: other)
            }
            starter.start()
            waiting.store(true, ordering: .relaxed)
            let end = waitInline(engine, for: id, limit: 30_000_000_000) { waited.hasCompleted }
            #expect(end == .commandQueued)
            #expect(!waited.hasCompleted, "the wait lasted until its own transfer ended")
            #expect(other.wait(seconds: 10).map { $0.error == nil } == true)
            #expect(!waited.hasCompleted, "the other transfer waited for the slow answer")
            #expect(waited.wait(seconds: 10).map { $0.error == nil } == true)
        }
    }
}
