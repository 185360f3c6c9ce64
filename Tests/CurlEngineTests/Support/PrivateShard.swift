import Foundation
import Glibc
import Synchronization

@testable import CurlEngine

/// An engine thread of the test's own, with one session open on it, so that
/// no other test's transfer keeps it awake or shares its loop.
final class PrivateShard: Sendable {
    let shard = EngineShard(index: 0)
    let placement: TransferPlacement
    private let nextSerial = Atomic<UInt64>(2)

    init() {
        shard.startThread(executor: EngineExecutor(shards: [shard]))
        let sessionID = EngineSessionID(serial: 1, shardCount: 1)
        shard.commands.enqueue(.openSession(sessionID, EngineSessionOptions(maximumConnectionsPerHost: 0)))
        placement = TransferPlacement(session: sessionID)
    }

    var commands: CommandQueue { shard.commands }

    /// Starts a GET of `url` (from the calling thread: an inline turn when
    /// the engine thread sleeps idle) and returns its identifier.
    @discardableResult
    func startGET(_ url: String, idleTimeout: Double = 30, delegate: any TransferDelegate) -> TransferID {
        let id = TransferID(serial: nextSerial.add(1, ordering: .relaxed).oldValue, shard: placement.place(url, from: nil))
        let request = TransferRequest(
            url: url, method: "GET", headers: [], body: .none, idleTimeout: idleTimeout, resourceTimeout: 30,
            trustRootsPEM: nil, acceptEncoding: nil)
        shard.commands.enqueue(.start(id, placement, request, collectsMetrics: false, delegate))
        return id
    }

    /// Polls `condition` every millisecond for up to `seconds`.
    static func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(1_000)
        }
        return condition()
    }
}
