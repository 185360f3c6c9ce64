import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// Requests per /flaky key, across connections: how many attempts a
/// client made (`LoopbackServer.flakyRequests`).
final class FlakyCounters: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    /// Counts one more request for `key`; returns its number (1 for the first).
    func next(_ key: String) -> Int {
        counts.withLock { counts in
            counts[key, default: 0] += 1
            return counts[key]!
        }
    }

    func count(_ key: String) -> Int {
        counts.withLock { $0[key] ?? 0 }
    }
}

/// /flaky/KEY: a server that fails the first requests for KEY, then answers.
enum FlakyRoute {
    /// ANY /flaky/KEY?fail=N: the first N requests for KEY fail (N = -1:
    /// every one), later ones get 200 with the body "ok after K" (K: that
    /// request's number). How they fail: `status=CODE` (default 503, body
    /// "status CODE"), with `retry-after=V` as the Retry-After field's
    /// value if given; or `how=reset`, closing the connection without a
    /// response. Every response carries X-Attempt: K.
    static func respond(_ request: RequestInfo) throws(BadRequest) -> ResponsePlan {
        let key = request.target.segments[1]
        let failures = try request.target.integer("fail", default: 1, in: -1...1_000_000)
        let attempt = request.flaky.next(key)
        var headers: HTTPHeaders = ["X-Attempt": "\(attempt)"]
        guard failures == -1 || attempt <= failures else {
            return .text(.ok, "ok after \(attempt)", headers: headers)
        }
        if request.target.value("how") == "reset" { return .reset }
        let code = try request.target.integer("status", default: 503, in: 400...599)
        if let retryAfter = request.target.value("retry-after") { headers.add(name: "Retry-After", value: retryAfter) }
        return .text(HTTPResponseStatus(statusCode: code), "status \(code)", headers: headers)
    }
}
