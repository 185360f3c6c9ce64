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
///
/// Counts are per session, so one session's traffic does not push another's
/// requests away from their pooled connections.
package final class TransferPlacement: Sendable {
    package let session: EngineSessionID
    /// Spreads sessions with little traffic over the shards.
    private let home: Int
    /// In-flight transfers on an https origin's own shard from which further
    /// ones may go to a less busy shard (and its own HTTP/2 connection).
    static let http2SpillThreshold = 16
    /// Transfers placed and not yet finished, per shard of the session.
    private let inFlight: Mutex<[Int]>

    init(session: EngineSessionID) {
        self.session = session
        let count = session.shardCount
        home = Int((session.rawValue >> CurlEngine.shardBits) % UInt64(count))
        inFlight = Mutex([Int](repeating: 0, count: count))
    }

    /// The shard for a transfer of `url`, counted as placed until `finished`.
    func place(_ url: String) -> Int {
        let count = session.shardCount
        if count == 1 {
            inFlight.withLock { $0[0] += 1 }
            return 0
        }
        if let origin = Self.httpsOriginHash(url) {
            let own = Int(origin % UInt64(count))
            return inFlight.withLock { counts in
                var chosen = own
                if counts[own] >= Self.http2SpillThreshold {
                    for index in counts.indices where counts[index] < counts[chosen] { chosen = index }
                }
                counts[chosen] += 1
                return chosen
            }
        }
        let current = EngineTurn.currentShard
        return inFlight.withLock { counts in
            var least = home
            for index in counts.indices where counts[index] < counts[least] { least = index }
            var chosen = least
            // Staying on the calling engine thread saves a hand-off, unless
            // that thread is clearly busier: then the transfer moves, and the
            // code that waits for it resumes where it ran.
            if let current, current < count, counts[current] <= counts[least] + 1 + counts[least] / 8 {
                chosen = current
            }
            counts[chosen] += 1
            return chosen
        }
    }

    /// A transfer placed on `shard` finished (engine thread).
    func finished(on shard: Int) {
        inFlight.withLock { $0[shard] -= 1 }
    }

    /// Transfers in flight per shard (tests).
    package var transfersInFlight: [Int] { inFlight.withLock { $0 } }

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
                let folded = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                hash = (hash ^ UInt64(folded)) &* 0x0000_0100_0000_01b3
            }
            return hash
        }
    }
}
