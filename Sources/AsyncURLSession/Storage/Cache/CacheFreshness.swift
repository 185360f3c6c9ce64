import Foundation

/// How old a stored response is and how long it stays fresh (RFC 9111
/// §4.2). Pure arithmetic over a stored response's fields and the times it
/// was requested and received.
struct CacheFreshness: Sendable {
    /// How long the response is fresh after it was generated.
    let lifetime: TimeInterval
    /// Its age now.
    let age: TimeInterval

    var isFresh: Bool { lifetime > age }
    /// How long it has been stale (0 while fresh).
    var staleness: TimeInterval { max(0, age - lifetime) }

    /// A heuristic lifetime is a tenth of the time since Last-Modified
    /// (§4.2.2), but at most a day: a file left alone for years should not
    /// be served unchecked for months.
    static let maximumHeuristicLifetime: TimeInterval = 24 * 60 * 60

    /// Statuses a cache may store and reuse without explicit freshness
    /// (RFC 9110 §15.1, "heuristically cacheable").
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    init(_ response: CachedResponse, now: Date) {
        let fields = response.fields
        let control = CacheControl(fields: fields.values(named: "Cache-Control"))
        let date = fields.value(named: "Date").flatMap(CookieDate.parse) ?? response.responseDate
        if let maxAge = control.maxAge {
            lifetime = TimeInterval(maxAge)
        } else if let expiresText = fields.value(named: "Expires") {
            // An invalid Expires (such as "0") means already expired.
            lifetime = CookieDate.parse(expiresText).map { $0.timeIntervalSince(date) } ?? 0
        } else if Self.heuristicallyCacheable.contains(response.statusCode),
            let lastModified = fields.value(named: "Last-Modified").flatMap(CookieDate.parse)
        {
            lifetime = min(Self.maximumHeuristicLifetime, max(0, date.timeIntervalSince(lastModified) / 10))
        } else {
            lifetime = 0
        }
        // §4.2.3, with the received Age field.
        let ageValue = fields.value(named: "Age").flatMap { TimeInterval($0.trimmingCharacters(in: .whitespaces)) } ?? 0
        let apparentAge = max(0, response.responseDate.timeIntervalSince(date))
        let responseDelay = max(0, response.responseDate.timeIntervalSince(response.requestDate))
        let correctedInitialAge = max(apparentAge, max(0, ageValue) + responseDelay)
        let residentTime = now.timeIntervalSince(response.responseDate)
        age = correctedInitialAge + max(0, residentTime)
    }
}
