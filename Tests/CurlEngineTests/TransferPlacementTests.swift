import Testing

@testable import CurlEngine

/// Which engine thread (shard) each transfer of a session runs on.
@Suite struct TransferPlacementTests {
    private func placement(shards: Int, serial: UInt64 = 7, connectionLimit: Int = 0) -> TransferPlacement {
        TransferPlacement(session: EngineSessionID(serial: serial, shardCount: shards), connectionLimit: connectionLimit)
    }

    @Test func requestsOneAfterTheOther_stayOnOneShard() {
        let placement = placement(shards: 2)
        var used: Set<Int> = []
        for _ in 0..<10 {
            let shard = placement.place("http://127.0.0.1:8080/a")
            used.insert(shard)
            placement.finished(on: shard)
        }
        #expect(used.count == 1)
        #expect(placement.transfersInFlight == [0, 0])
    }

    @Test func concurrentCleartextRequests_spreadEvenly() {
        let placement = placement(shards: 2)
        for _ in 0..<64 { _ = placement.place("http://127.0.0.1:8080/a") }
        #expect(placement.transfersInFlight == [32, 32])
    }

    /// Code on the I/O executor stays on its engine thread, but not past that
    /// thread's share of the per-host limit while another shard has room:
    /// the transfer would wait there for a connection.
    @Test func cleartextFromAnEngineThread_neverOverfillsItsShareOfTheConnectionLimit() {
        let placement = placement(shards: 2, connectionLimit: 200)
        for _ in 0..<200 { _ = placement.place("http://127.0.0.1:8080/drip", from: 0) }
        #expect(placement.transfersInFlight == [100, 100])
        // Both full: the caller's own shard again (it queues either way).
        #expect(placement.place("http://127.0.0.1:8080/drip", from: 1) == 1)
    }

    /// An odd limit splits unevenly; each shard fills to its own share.
    @Test func oddConnectionLimit_fillsEachShardToItsShare() {
        let placement = placement(shards: 2, connectionLimit: 5)
        for _ in 0..<5 { _ = placement.place("http://127.0.0.1:8080/a", from: nil) }
        #expect(placement.transfersInFlight == [3, 2])
    }

    /// HTTP/2 needs TLS here: one origin's requests share one shard so that
    /// they multiplex on one connection.
    @Test func httpsOrigin_underTheSpillThreshold_usesOneShard() {
        let placement = placement(shards: 4)
        let first = placement.place("https://Example.com:8443/a")
        for path in ["/b", "?q=1", "#f", "/c/d"] {
            #expect(placement.place("https://example.COM:8443" + path) == first)
        }
        #expect(placement.transfersInFlight[first] == 5)
    }

    /// A busy origin spills to the least loaded shards (each multiplexes on
    /// its own connection), so every engine thread serves it.
    @Test func busyHTTPSOrigin_spillsToTheOtherShards_evenly() {
        let placement = placement(shards: 2)
        let own = placement.place("https://example.com/a")
        for _ in 1..<TransferPlacement.http2SpillThreshold {
            #expect(placement.place("https://example.com/a") == own)
        }
        #expect(placement.place("https://example.com/a") != own, "the threshold reached, the next goes elsewhere")
        for _ in 0..<47 { _ = placement.place("https://example.com/a") }
        #expect(placement.transfersInFlight == [32, 32])
    }

    @Test func httpsOriginHash_ignoresSchemeCaseAndPath_andOnlyHashesHTTPS() {
        let hash = TransferPlacement.httpsOriginHash("https://a.test/x")
        #expect(hash != nil)
        #expect(TransferPlacement.httpsOriginHash("HTTPS://A.TEST/y?z") == hash)
        #expect(TransferPlacement.httpsOriginHash("https://a.test:444/x") != hash)
        #expect(TransferPlacement.httpsOriginHash("http://a.test/x") == nil)
        #expect(TransferPlacement.httpsOriginHash("https://") == nil)
    }

    @Test func oneShard_takesEverything() {
        let placement = placement(shards: 1)
        for _ in 0..<5 { #expect(placement.place("http://127.0.0.1/") == 0) }
        #expect(placement.transfersInFlight == [5])
    }

    /// Split over the shards, a per-host limit is never exceeded in total and
    /// each shard keeps at least one connection.
    @Test(arguments: [1, 2, 3, 5, 6, 64])
    func perHostLimit_isSplitExactly(limit: Int) {
        let options = EngineSessionOptions(maximumConnectionsPerHost: limit)
        for count in 1...min(limit, 4) {
            let parts = (0..<count).map { options.part($0, of: count).maximumConnectionsPerHost }
            #expect(parts.reduce(0, +) == limit)
            #expect(parts.allSatisfy { $0 >= 1 })
        }
        #expect(EngineSessionOptions(maximumConnectionsPerHost: 0).part(1, of: 2).maximumConnectionsPerHost == 0)
    }

    @Test func sessionWithALimitOfOne_usesOneShard() {
        let placement = CurlEngine.shared.makeSession(options: EngineSessionOptions(maximumConnectionsPerHost: 1))
        #expect(placement.session.shardCount == 1)
        let unlimited = CurlEngine.shared.makeSession(options: EngineSessionOptions(maximumConnectionsPerHost: 0))
        #expect(unlimited.session.shardCount == CurlEngine.shared.threadCount)
    }
}
