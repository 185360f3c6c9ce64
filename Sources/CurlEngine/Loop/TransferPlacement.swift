import Synchronization

/// Chooses the engine thread (shard) of each transfer of one session.
///
/// The rules, each for a behaviour users of URLSession rely on:
/// - An `https` origin has its own shard in each session, and requests to it
///   go there while it has fewer than `http2SpillThreshold` in flight: HTTP/2
///   (negotiated over TLS only) multiplexes them on one connection, as
///   URLSession does, and TLS sessions resume within that shard's pool. Past
///   the threshold they go to the shard with the fewest, where they
///   multiplex on that shard's own connection: at most one connection per
///   shard. One engine thread serving a busy origin alone was the limit at
///   64 concurrent HTTP/2 requests (0.7x raw libcurl's rate; spread, 1.0x).
/// - Cleartext requests (HTTP/1.1, one request per connection at a time) go
///   to the shard with the fewest of this session's transfers, the session's
///   home shard on a tie, or to the calling engine thread (no hand-off, as on
///   `Session.ioExecutor`) unless that one has clearly more. Requests made
///   one after the other therefore stay on one shard and reuse its pooled
///   connection; many at once spread over every shard.
/// - A shard whose share of the per-host connection limit is taken gets no
///   cleartext transfer while another shard has room: there it would wait
///   for a connection of its own shard although the session's limit allows
///   one more. (Found with 200 slow transfers from the I/O executor: 6 of
///   them waited for the first 100 to end, doubling the run.)
///
/// Counts are per session, so one session's traffic does not push another's
/// requests away from their pooled connections. They are atomics, not one
/// locked array: placing and finishing were two lock acquisitions per
/// request. A choice made while another thread places or finishes may read
/// counts one apart; the rules are about load, so that is harmless.
package final class TransferPlacement: Sendable {
    package let session: EngineSessionID
    /// Spreads sessions with little traffic over the shards.
    private let home: Int
    /// In-flight transfers on an https origin's own shard from which further
    /// ones may go to a less busy shard (and its own HTTP/2 connection).
    static let http2SpillThreshold = 16
    /// Transfers placed and not yet finished, per shard of the session.
    private let inFlight: [ShardCount]
    /// Each shard's share of the per-host connection limit (see
    /// `EngineSessionOptions.part`); all 0 when there is no limit.
    private let connectionShares: [Int]

    /// `connectionLimit`: the session's per-host limit, 0 for none.
    init(session: EngineSessionID, connectionLimit: Int = 0) {
        self.session = session
        let count = session.shardCount
        home = Int((session.rawValue >> CurlEngine.shardBits) % UInt64(count))
        inFlight = (0..<count).map { _ in ShardCount() }
        let options = EngineSessionOptions(maximumConnectionsPerHost: max(0, connectionLimit))
        connectionShares = (0..<count).map { options.part($0, of: count).maximumConnectionsPerHost }
    }

    /// The shard for a transfer of `url`, counted as placed until `finished`.
    /// `callingShard`: the engine thread the caller runs on, if any.
    func place(_ url: String, from callingShard: Int? = EngineTurn.currentShard) -> Int {
        let count = session.shardCount
        if count == 1 {
            inFlight[0].add(1)
            return 0
        }
        if let origin = Self.httpsOriginHash(url) {
            let own = Int(origin % UInt64(count))
            var chosen = own
            var chosenCount = inFlight[own].load()
            if chosenCount >= Self.http2SpillThreshold {
                for index in inFlight.indices {
                    let load = inFlight[index].load()
                    if load < chosenCount { (chosen, chosenCount) = (index, load) }
                }
            }
            inFlight[chosen].add(1)
            return chosen
        }
        let shares = connectionShares
        // Load relative to each shard's share of the connection limit
        // (shares differ by one when the limit is odd).
        var least = home
        var leastCount = inFlight[home].load()
        for index in inFlight.indices {
            let load = inFlight[index].load()
            if load - shares[index] < leastCount - shares[least] { (least, leastCount) = (index, load) }
        }
        var chosen = least
        // Staying on the calling engine thread saves a hand-off, unless
        // that thread is clearly busier or out of connections: then the
        // transfer moves, and the code that waits for it resumes where it ran.
        if let current = callingShard, current < count {
            let currentCount = inFlight[current].load()
            if currentCount <= leastCount + 1 + leastCount / 8,
                shares[current] == 0 || currentCount < shares[current] || leastCount >= shares[least]
            {
                chosen = current
            }
        }
        inFlight[chosen].add(1)
        return chosen
    }

    /// A transfer placed on `shard` finished (engine thread).
    func finished(on shard: Int) {
        inFlight[shard].add(-1)
    }

    /// Transfers in flight per shard (tests).
    package var transfersInFlight: [Int] { inFlight.map { $0.load() } }

    /// FNV-1a of an https URL's authority, ASCII case folded; nil for any
    /// other scheme. The authority is what names a connection pool entry
    /// (host and port); a path never changes which shard an origin uses.
    static func httpsOriginHash(_ url: String) -> UInt64? {
        var url = url
        return url.withUTF8 { bytes -> UInt64? in
            // Byte checks, not a generic prefix match: this runs for every
            // request, and most are not https.
            guard bytes.count > 8,
                bytes[0] | 0x20 == UInt8(ascii: "h"), bytes[1] | 0x20 == UInt8(ascii: "t"),
                bytes[2] | 0x20 == UInt8(ascii: "t"), bytes[3] | 0x20 == UInt8(ascii: "p"),
                bytes[4] | 0x20 == UInt8(ascii: "s"), bytes[5] == UInt8(ascii: ":"),
                bytes[6] == UInt8(ascii: "/"), bytes[7] == UInt8(ascii: "/")
            else { return nil }
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes[8...] {
                if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
                hash = (hash ^ UInt64(byte.asciiLowercased)) &* 0x0000_0100_0000_01b3
            }
            return hash
        }
    }
}

/// One shard's count of a session's transfers in flight.
private final class ShardCount: Sendable {
    private let value = Atomic<Int>(0)

    func load() -> Int { value.load(ordering: .relaxed) }
    func add(_ delta: Int) { value.add(delta, ordering: .relaxed) }
}
