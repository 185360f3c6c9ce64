import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HAR.Timings {
    /// A hop's phases from its transaction's dates, in milliseconds.
    ///
    /// Each phase starts where the one before it ended (a date earlier than
    /// that counts as that point), so no phase is negative and the phases
    /// tile the hop without overlap: their sum (`total`) is the hop's time.
    /// `connect` runs to the end of the TLS handshake, `ssl` is that
    /// handshake alone (HAR 1.2 counts it inside `connect`). A phase that
    /// did not happen (no DNS or connect on a reused connection, no TLS over
    /// http) is -1; `send`, `wait` and `receive` are never -1 (HAR requires
    /// them), 0 when the hop ended before them.
    init(_ metrics: TransactionMetrics) {
        let origin = metrics.fetchStartDate
        func offset(_ date: Date?) -> Double? {
            date.map { max(0, $0.timeIntervalSince(origin) * 1000) }
        }
        var cursor = 0.0
        /// From `start` (or the cursor, if later) to `end` (or that start,
        /// if earlier); the cursor moves to its end.
        func phase(from start: Double?, to end: Double?) -> Double {
            guard let start, let end else { return -1 }
            let from = max(start, cursor)
            let to = max(end, from)
            cursor = to
            return Self.rounded(to - from)
        }
        let dnsStart = offset(metrics.domainLookupStartDate)
        let connectStart = offset(metrics.connectStartDate)
        let requestStart = offset(metrics.requestStartDate)
        let responseStart = offset(metrics.responseStartDate)
        let responseEnd = offset(metrics.responseEndDate)
        // Queued until the first thing the hop did.
        let firstStep = dnsStart ?? connectStart ?? requestStart ?? responseStart ?? responseEnd
        let blocked = phase(from: 0, to: firstStep)
        let dns = phase(from: dnsStart, to: offset(metrics.domainLookupEndDate))
        let tlsEnd = offset(metrics.secureConnectionEndDate)
        let connect = phase(from: connectStart, to: tlsEnd ?? offset(metrics.connectEndDate))
        var ssl = -1.0
        if let tlsStart = offset(metrics.secureConnectionStartDate), let tlsEnd {
            ssl = min(Self.rounded(max(0, tlsEnd - tlsStart)), max(connect, 0))
        }
        // libcurl reports when the request started going out, not when it
        // was all sent: the sending is part of `wait`.
        let send = requestStart == nil ? 0 : phase(from: requestStart, to: requestStart)
        let wait = max(0, phase(from: requestStart ?? cursor, to: responseStart ?? responseEnd ?? cursor))
        let receive = max(0, phase(from: responseStart ?? cursor, to: responseEnd ?? cursor))
        self.init(blocked: blocked, dns: dns, connect: connect, ssl: ssl, send: send, wait: wait, receive: receive)
    }

    /// To the microsecond, so that a sum of rounded phases is what a reader
    /// adds up again.
    static func rounded(_ milliseconds: Double) -> Double {
        (milliseconds * 1000).rounded() / 1000
    }
}
