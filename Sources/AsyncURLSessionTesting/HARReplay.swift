import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Answers a session's requests from a HAR file (one `HARRecorder` wrote,
/// or a browser's "Save all as HAR"): set it as a configuration's
/// `localTransport`, as `StubTransport`.
///
///     var configuration = SessionConfiguration.ephemeral
///     configuration.localTransport = try HARReplay(contentsOf: fixtureURL)
///
/// - **Matching**: a request matches the entries of its method and URL
///   (query included); with `Options.matchedHeaderNames` and
///   `matchesBody`, those must be equal too.
/// - **Order**: repeated requests get the matching entries in the file's
///   order, then the last one again (`repeatsLastEntry`).
/// - **Answers**: the recorded status, headers and body. The body was
///   recorded decoded, so Content-Encoding, Transfer-Encoding and the
///   recorded Content-Length go, and a Content-Length of the body comes;
///   a redacted Set-Cookie is left out. Entries without a response (status
///   0: the hop failed) never answer. With `replaysTimings`, the head
///   comes after the recorded time to the first byte and the body after
///   `receive`.
/// - **Unmatched**: the request fails with `URLError(.unsupportedURL)`
///   whose message names it and the nearest entry, or goes to the network
///   with `unmatched: .network`.
public final class HARReplay: LocalTransport, Sendable {
    public struct Options: Sendable {
        /// Request headers (any case) whose values must equal the entry's.
        public var matchedHeaderNames: [String]
        /// Whether the request body must equal the entry's `postData`.
        public var matchesBody: Bool
        /// Whether answers take the recorded time (see `HARReplay`).
        public var replaysTimings: Bool
        /// Whether a request that used up its entries gets the last one again
        /// (else it is unmatched).
        public var repeatsLastEntry: Bool
        /// What happens to a request no entry matches.
        public var unmatched: StubTransport.Unmatched

        public init(
            matchedHeaderNames: [String] = [], matchesBody: Bool = false, replaysTimings: Bool = false,
            repeatsLastEntry: Bool = true, unmatched: StubTransport.Unmatched = .fail
        ) {
            self.matchedHeaderNames = matchedHeaderNames
            self.matchesBody = matchesBody
            self.replaysTimings = replaysTimings
            self.repeatsLastEntry = repeatsLastEntry
            self.unmatched = unmatched
        }
    }

    /// The file's entries that can answer (those with a response).
    public let entries: [HAR.Entry]
    public let options: Options
    /// Where the entries came from, for error messages.
    let source: String
    /// Per entry: whether it answered already.
    private let answered: Mutex<[Bool]>

    /// Reads the HAR file at `url`.
    public convenience init(contentsOf url: URL, options: Options = Options()) throws {
        try self.init(document: HAR.Document.read(from: url), options: options, source: url.lastPathComponent)
    }

    /// Replays `document`'s entries.
    public init(document: HAR.Document, options: Options = Options(), source: String = "the HAR") {
        entries = document.log.entries.filter { $0.response.status > 0 }
        self.options = options
        self.source = source
        answered = Mutex(Array(repeating: false, count: entries.count))
    }

    /// How many entries answered a request so far.
    public var answeredCount: Int {
        answered.withLock { $0.count(where: { $0 }) }
    }

    // MARK: LocalTransport

    public func responder(for request: LocalRequest) -> (any LocalResponder)? {
        guard let url = request.url else { return nil }
        if options.unmatched == .network,
            !entries.contains(where: { Self.sameRequestLine($0, method: request.httpMethod, url: url) })
        {
            return nil
        }
        return HARReplayResponder(replay: self)
    }

    // MARK: Choosing an entry

    /// The entry that answers, marked as answered; nil when none matches.
    func take(method: String, url: URL, headers: [String: String], body: Data) -> HAR.Entry? {
        let candidates = entries.indices.filter { index in
            Self.sameRequestLine(entries[index], method: method, url: url)
                && matchesHeaders(entries[index], headers) && (!options.matchesBody || Self.sameBody(entries[index], body))
        }
        guard !candidates.isEmpty else { return nil }
        let chosen = answered.withLock { answered -> Int? in
            if let fresh = candidates.first(where: { !answered[$0] }) {
                answered[fresh] = true
                return fresh
            }
            return options.repeatsLastEntry ? candidates.last : nil
        }
        return chosen.map { entries[$0] }
    }

    static func sameRequestLine(_ entry: HAR.Entry, method: String, url: URL) -> Bool {
        guard entry.request.method.uppercased() == method.uppercased() else { return false }
        if entry.request.url == url.absoluteString { return true }
        // A browser may spell the same URL differently (an escaped character).
        return URL(string: entry.request.url)?.absoluteURL.standardized == url.absoluteURL.standardized
    }

    private func matchesHeaders(_ entry: HAR.Entry, _ headers: [String: String]) -> Bool {
        options.matchedHeaderNames.allSatisfy { name in
            let recorded = entry.request.headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
            let sent = headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
            return recorded == sent
        }
    }

    private static func sameBody(_ entry: HAR.Entry, _ body: Data) -> Bool {
        (entry.request.postData?.data ?? Data()) == body
    }

    /// What an unmatched request's error says: the request, and the entry
    /// closest to it (its method first, then the longest common start of
    /// the URL).
    func unmatchedMessage(method: String, url: URL) -> String {
        let target = url.absoluteString
        var message = "HARReplay has no entry for \(method) \(target) in \(source) (\(entries.count) entries)."
        let nearest = entries.max { score($0, method: method, url: target) < score($1, method: method, url: target) }
        if let nearest {
            message += " The nearest: \(nearest.request.method) \(nearest.request.url) (status \(nearest.response.status))."
            if Self.sameRequestLine(nearest, method: method, url: url) {
                message += options.repeatsLastEntry
                    ? " It differs in the headers or body the options match."
                    : " Its entries were all used (repeatsLastEntry is off)."
            }
        }
        return message
    }

    private func score(_ entry: HAR.Entry, method: String, url: String) -> Int {
        let common = zip(entry.request.url.utf8, url.utf8).prefix { $0 == $1 }.count
        return (entry.request.method.uppercased() == method.uppercased() ? 1 << 20 : 0) + common
    }
}
