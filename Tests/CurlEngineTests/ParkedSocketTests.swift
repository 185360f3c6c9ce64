import CCurl
import Glibc
import Testing

@testable import CurlEngine

/// A socket libcurl lets go of (CURL_POLL_REMOVE) stays in the epoll set
/// while idle, and leaves it on its first event, so a level-triggered event
/// on it (the server closed the pooled connection) cannot repeat forever.
@Suite struct ParkedSocketTests {
    private let pollIn = Int32(CURL_POLL_IN)
    private let pollRemove = Int32(CURL_POLL_REMOVE)

    // MARK: Setup shared by the tests

    private func readyCount(_ epollFD: Int32) -> Int32 {
        var datas = [UInt64](repeating: 0, count: 4)
        var events = [UInt32](repeating: 0, count: 4)
        return ccurl_epoll_wait(epollFD, &datas, &events, 4, 0)
    }

    private func makeEpoll() throws -> Int32 {
        let epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        try #require(epollFD >= 0)
        return epollFD
    }

    /// A session on `epollFD` whose serial and tag are `serial`.
    private func makeSession(_ epollFD: Int32, claims: ParkedSocketClaims, serial: UInt64 = 1) throws -> MultiSession {
        try #require(MultiSession(
            id: EngineSessionID(serial: serial, shardCount: 1), tag: UInt32(serial), epollFD: epollFD, claims: claims,
            options: EngineSessionOptions(maximumConnectionsPerHost: 0)))
    }

    private func makeSocketPair() throws -> [Int32] {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        return pair
    }

    /// libcurl watches `socket` for input, then lets go of it.
    private func watchThenPark(_ socket: Int32, in session: MultiSession) {
        session.watch(socket: socket, what: pollIn, registered: nil)
        session.watch(socket: socket, what: pollRemove, registered: UnsafeMutableRawPointer(bitPattern: 1))
    }

    /// A session on a new epoll set, with a socket pair whose first end
    /// libcurl opened through the hooks (`claims.opened`), watched and then
    /// parked; everything is closed after `body`.
    private func withLiveParkedSocket(
        _ body: (_ epollFD: Int32, _ session: MultiSession, _ pair: [Int32]) throws -> Void
    ) throws {
        let epollFD = try makeEpoll()
        defer { close(epollFD) }
        let claims = ParkedSocketClaims()
        let session = try makeSession(epollFD, claims: claims)
        defer { session.close() }
        let pair = try makeSocketPair()
        defer { close(pair[0]); close(pair[1]) }
        claims.opened(pair[0])
        watchThenPark(pair[0], in: session)
        try body(epollFD, session, pair)
    }

    /// Closes the socket pair `old` and puts a new socket under `old[0]`'s
    /// number at once (dup2, so no other test's socket can take the number
    /// in between); returns that number and the new socket's peer.
    private static func reuseNumber(of old: [Int32]) throws -> (reused: Int32, peer: Int32) {
        var new: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &new) == 0)
        try #require(dup2(new[0], old[0]) == old[0])
        close(new[0])
        close(old[1])
        return (old[0], new[1])
    }

    // MARK: Parking

    @Test func parkedSocket_leavesTheSetOnItsFirstEvent_andComesBackWhenWatched() throws {
        let epollFD = try makeEpoll()
        defer { close(epollFD) }
        let pair = try makeSocketPair()
        defer { close(pair[0]) }
        let session = try makeSession(epollFD, claims: ParkedSocketClaims())
        defer { session.close() }
        let socket = pair[0]

        watchThenPark(socket, in: session)
        #expect(readyCount(epollFD) == 0, "an idle parked socket raised an event")
        #expect(!session.parkedSocketBecameReady(pair[1]), "a socket never parked counted as parked")

        // The peer closes: the parked socket becomes readable (EOF).
        close(pair[1])
        #expect(readyCount(epollFD) == 1)
        #expect(session.parkedSocketBecameReady(socket))
        #expect(readyCount(epollFD) == 0, "the parked socket stayed in the set and would fire again")

        // Watched again (libcurl reuses the connection): back in the set.
        session.watch(socket: socket, what: pollIn, registered: nil)
        #expect(readyCount(epollFD) == 1)
        #expect(!session.parkedSocketBecameReady(socket), "a watched socket counted as parked")
    }

    /// While a caller waits inline, the engine thread's epoll set must not
    /// report the watched sockets; shown again, a socket that became ready
    /// meanwhile is reported at once.
    @Test func hiddenSockets_raiseNoEvent_untilShownAgain() throws {
        let epollFD = try makeEpoll()
        defer { close(epollFD) }
        let first = try makeSocketPair()
        let second = try makeSocketPair()
        defer { for fd in first + second { close(fd) } }
        let session = try makeSession(epollFD, claims: ParkedSocketClaims())
        defer { session.close() }

        session.watch(socket: first[0], what: pollIn, registered: nil)
        session.hideSockets()
        #expect(write(first[1], "x", 1) == 1)
        // A socket libcurl starts watching while hidden joins with no events too.
        session.watch(socket: second[0], what: pollIn, registered: nil)
        #expect(write(second[1], "y", 1) == 1)
        #expect(readyCount(epollFD) == 0, "a hidden socket raised an event")

        session.showSockets()
        #expect(readyCount(epollFD) == 2)
        #expect(session.watchedSockets.count == 2)
    }

    // MARK: A parked number reused by another session

    /// A parked socket that libcurl closes (it says nothing then) leaves its
    /// number behind; the kernel gives the number to another session's new
    /// socket. A stale event of the old socket, handled after that, must not
    /// delete the new socket's epoll entry (reads stalled for 10 s in about
    /// one full test run in four before `ParkedSocketClaims`).
    @Test func aNumberParkedByOneSession_andReusedByAnother_keepsTheNewSocketsEntry() throws {
        let epollFD = try makeEpoll()
        defer { close(epollFD) }
        let claims = ParkedSocketClaims()
        let first = try makeSession(epollFD, claims: claims, serial: 1)
        defer { first.close() }
        let second = try makeSession(epollFD, claims: claims, serial: 2)
        defer { second.close() }

        let old = try makeSocketPair()
        let number = old[0]
        watchThenPark(number, in: first)
        // libcurl closes the parked connection (no callback), and the number goes to a new socket.
        let (reused, peer) = try Self.reuseNumber(of: old)
        defer { close(reused); close(peer) }
        second.watch(socket: reused, what: pollIn, registered: nil)

        // The stale event of the first session's old socket.
        #expect(!first.parkedSocketBecameReady(number), "the first session still counted the number as its own")
        #expect(write(peer, "x", 1) == 1)
        #expect(readyCount(epollFD) == 1, "the new socket's epoll entry was deleted")
    }

    /// As above, but the number's new socket is a raw stream's, which
    /// libcurl may never have asked to watch (a connect that completed at
    /// once): taking it for the stream must claim the number all the same.
    @Test func aNumberParkedByOneSession_andTakenForAnotherSessionsStream_keepsTheStreamsEntry() throws {
        let epollFD = try makeEpoll()
        defer { close(epollFD) }
        let claims = ParkedSocketClaims()
        let first = try makeSession(epollFD, claims: claims, serial: 1)
        defer { first.close() }
        let second = try makeSession(epollFD, claims: claims, serial: 2)
        defer { second.close() }

        let old = try makeSocketPair()
        let number = old[0]
        watchThenPark(number, in: first)
        let (reused, peer) = try Self.reuseNumber(of: old)
        defer { close(reused); close(peer) }
        // Taken for a stream without a watch: the engine adds it under the stream's tag.
        second.releaseSocket(reused)
        #expect(ccurl_epoll_ctl(epollFD, EPOLL_CTL_ADD, reused, EPOLLIN.rawValue, 7) == 0)

        #expect(!first.parkedSocketBecameReady(number), "the first session still counted the number as its own")
        #expect(write(peer, "x", 1) == 1)
        #expect(readyCount(epollFD) == 1, "the stream's epoll entry was deleted")
    }

    // MARK: Watched again with the events the entry kept

    // A parked connection socket asked for again with the events its entry
    // has needs no epoll_ctl, but only while the number is still that
    // socket: `SocketHooks` tell the engine which numbers libcurl opened and
    // has not closed (`ParkedSocketClaims.opened` / `closing`, called here
    // as the hooks would).

    @Test func aLiveParkedSocket_watchedAgainForTheSameEvents_changesNothing_andStillReports() throws {
        try withLiveParkedSocket { epollFD, session, pair in
            let changes = session.epollChanges
            session.watch(socket: pair[0], what: pollIn, registered: nil)
            #expect(session.epollChanges == changes, "the same events were set again")
            #expect(write(pair[1], "x", 1) == 1)
            #expect(readyCount(epollFD) == 1)
        }
    }

    @Test func aLiveParkedSocket_watchedForOtherEvents_isModified() throws {
        try withLiveParkedSocket { epollFD, session, pair in
            // Writable at once: reported only if the entry now asks for EPOLLOUT.
            session.watch(socket: pair[0], what: Int32(CURL_POLL_OUT), registered: nil)
            #expect(readyCount(epollFD) == 1, "the entry kept the parked events")
        }
    }

    @Test func aLiveParkedSocket_closedByLibcurl_andItsNumberReopened_isAddedAgain() throws {
        let epollFD = try makeEpoll()
        defer { close(epollFD) }
        let claims = ParkedSocketClaims()
        let session = try makeSession(epollFD, claims: claims)
        defer { session.close() }
        let old = try makeSocketPair()
        claims.opened(old[0])
        watchThenPark(old[0], in: session)

        // libcurl closes it through the hook, and opens a new connection under the same number.
        claims.closing(old[0])
        let (reused, peer) = try Self.reuseNumber(of: old)
        defer { close(reused); close(peer) }
        claims.opened(reused)
        session.watch(socket: reused, what: pollIn, registered: nil)
        #expect(write(peer, "x", 1) == 1)
        #expect(readyCount(epollFD) == 1, "the new socket was never added")
    }

    /// A socket libcurl did not open through the hooks (its resolver's
    /// socket pair) can be closed without a word and its number reused:
    /// watched again, it is always set in epoll.
    @Test func aParkedSocketNotOpenedThroughTheHooks_isSetAgainWhenWatched() throws {
        let epollFD = try makeEpoll()
        defer { close(epollFD) }
        let session = try makeSession(epollFD, claims: ParkedSocketClaims())
        defer { session.close() }
        let old = try makeSocketPair()
        watchThenPark(old[0], in: session)
        let (reused, peer) = try Self.reuseNumber(of: old)
        defer { close(reused); close(peer) }
        session.watch(socket: reused, what: pollIn, registered: nil)
        #expect(write(peer, "x", 1) == 1)
        #expect(readyCount(epollFD) == 1, "the reused number was never added")
    }
}
