import AgentWire
@testable import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The background link's state machine, without an agent: attaching,
/// losing and regaining the agent, watchers, and the session's events.
@Suite struct BackgroundLinkStateTests {
    private static func status(task: Int, id: Int64 = 7, ended: Bool = false) -> BackgroundTransferStatus {
        BackgroundTransferStatus(
            id: id, session: "s", task: task, url: "http://127.0.0.1/", phase: ended ? "finished" : "running",
            bytesOnDisk: 0, expectedBytes: -1, file: nil, failure: nil)
    }

    private static func watcher() -> (AsyncStream<BackgroundTransferStatus>, BackgroundLinkState.Watcher) {
        AsyncStream<BackgroundTransferStatus>.makeStream()
    }

    @Test func closing_shutsTheHeldSocket_once() {
        var state = BackgroundLinkState(events: nil)
        state.attached(lease: 9)
        #expect(state.close() == 9)
        #expect(state.close() == nil)
        #expect(!state.mayReattach)
    }

    @Test func aLostAgent_isAttachedAgainAtOnce_onlyWhileATaskWatches() {
        var quiet = BackgroundLinkState(events: nil)
        quiet.attached(lease: 3)
        #expect(quiet.readerEnded(fd: 3) == false)
        #expect(quiet.mayReattach)
        #expect(quiet.lastingFailure == nil)

        var watched = BackgroundLinkState(events: nil)
        watched.attached(lease: 3)
        _ = watched.watch(task: 1, with: Self.watcher().1)
        #expect(watched.readerEnded(fd: 3) == true)
    }

    @Test func aReaderEndingAfterClose_attachesNothing() {
        var state = BackgroundLinkState(events: nil)
        state.attached(lease: 3)
        _ = state.watch(task: 1, with: Self.watcher().1)
        _ = state.close()
        #expect(state.readerEnded(fd: 3) == false)
        #expect(!state.mayReattach)
    }

    @Test func watching_withoutAConnection_isRefused_unlessOneIsComing() {
        var idle = BackgroundLinkState(events: nil)
        guard case .refused = idle.watch(task: 1, with: Self.watcher().1) else {
            Issue.record("a watcher with no connection was kept")
            return
        }
        var lost = BackgroundLinkState(events: nil)
        lost.attached(lease: 4)
        _ = lost.readerEnded(fd: 4)
        guard case .watching(nil) = lost.watch(task: 1, with: Self.watcher().1) else {
            Issue.record("a watcher while the agent is attached again was refused")
            return
        }
    }

    @Test func aWatcher_getsTheLatestStatusFirst_thenUpdates() {
        var state = BackgroundLinkState(events: nil)
        state.attached(lease: 5)
        #expect(state.received(Self.status(task: 2)) == nil)
        guard case .watching(let latest?) = state.watch(task: 2, with: Self.watcher().1) else {
            Issue.record("no latest status")
            return
        }
        #expect(latest.task == 2)
        #expect(state.received(Self.status(task: 2)) != nil)
        #expect(state.unwatch(task: 2) != nil)
        #expect(state.received(Self.status(task: 2)) == nil)
    }

    @Test func reattaching_tellsTheWatchersTheNewAgentsStatus_andClearsTheFailure() {
        var state = BackgroundLinkState(events: nil)
        state.attached(lease: 5)
        _ = state.watch(task: 1, with: Self.watcher().1)
        _ = state.readerEnded(fd: 5)
        let updates = state.reattached(lease: 6, transfers: [Self.status(task: 1), Self.status(task: 8)])
        #expect(updates?.map(\.1.task) == [1])
        #expect(!state.mayReattach)
        #expect(state.lease == 6)
    }

    @Test func reattaching_afterTheSessionWent_isRefused() {
        var state = BackgroundLinkState(events: nil)
        _ = state.close()
        #expect(state.reattached(lease: 6, transfers: []) == nil)
    }

    @Test func givingUp_endsEveryWatcher_withALastingFailureOnlyOnceNotLost() {
        var state = BackgroundLinkState(events: nil)
        state.attached(lease: 5)
        _ = state.watch(task: 1, with: Self.watcher().1)
        _ = state.watch(task: 2, with: Self.watcher().1)
        _ = state.readerEnded(fd: 5)
        #expect(state.gaveUp(URLError(.backgroundSessionWasDisconnected)).count == 2)
        #expect(state.watcherCount == 0)
        #expect(state.failure?.code == .backgroundSessionWasDisconnected)
        // Still lost: the next task tries again, so the failure is not lasting.
        #expect(state.lastingFailure == nil)
    }

    @Test func events_endOnceEveryEndedTransferWasHandedOver() {
        let (_, events) = AsyncThrowingStream<BackgroundSessionEvent, any Error>.makeStream()
        var state = BackgroundLinkState(events: events)
        _ = state.reconnected(task: 1, to: Self.status(task: 1, id: 11, ended: true))
        _ = state.reconnected(task: 2, to: Self.status(task: 2, id: 12))
        #expect(state.takeEventsIfDelivered() == nil)
        #expect(state.takeReconnected(task: 1) == 11)
        #expect(state.takeReconnected(task: 1) == nil)
        state.handedOver(task: 1)
        #expect(state.takeEventsIfDelivered() != nil)
        #expect(state.takeEventsIfDelivered() == nil)
    }

    @Test func aFailure_endsTheEvents_once() {
        let (_, events) = AsyncThrowingStream<BackgroundSessionEvent, any Error>.makeStream()
        var state = BackgroundLinkState(events: events)
        #expect(state.failed(URLError(.backgroundSessionInUseByAnotherProcess)) != nil)
        #expect(state.failed(URLError(.backgroundSessionInUseByAnotherProcess)) == nil)
        #expect(state.lastingFailure?.code == .backgroundSessionInUseByAnotherProcess)
    }
}
