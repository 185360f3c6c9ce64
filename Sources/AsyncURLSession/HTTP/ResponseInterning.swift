internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Hands out one Foundation `HTTPURLResponse` for byte-identical response
/// heads from the same URL, instead of building a new one each time.
///
/// Why: corelibs' `HTTPURLResponse.init` canonicalises every field name through
/// NSString (`caseInsensitiveCompare`, `capitalized`) and parses Content-Type,
/// 15-25 µs per response, the costliest step of a small request. Its reading
/// accessors (`allHeaderFields`, `value(forHTTPHeaderField:)`) are `public`,
/// not `open`, so a subclass cannot compute them lazily; the only way to skip
/// the work is not to repeat it. Repeated identical heads are common (polling,
/// one resource fetched many times): they differ at most in `Date`, once a
/// second.
///
/// Why sharing is safe: the object is immutable (every property is read-only
/// and corelibs' `copy()` returns `self`), and it is exactly the object
/// corelibs would build from the same input. Only its identity is shared.
///
/// Bounded: a few recent heads, each small; large heads are never kept.
final class ResponseInterning: Sendable {
    /// The process's cache; tests make their own.
    static let shared = ResponseInterning(capacity: 16)

    /// A class: compared in place during a lookup, where an element of a
    /// struct type was copied first (its key's buffers, version and URL).
    private final class Entry: Sendable {
        let key: Key
        let response: HTTPURLResponse

        init(key: Key, response: HTTPURLResponse) {
            self.key = key
            self.response = response
        }
    }

    /// What the response is built from, compared in full. The header fields
    /// are compared as received bytes, so a hit decodes no String at all;
    /// heads that differ only in how a non-ASCII byte was sent just miss.
    struct Key {
        let statusCode: Int
        let fields: ResponseHeaderFields
        let httpVersion: String
        let url: URL

        init(head: ResponseHead, url: URL) {
            statusCode = head.statusCode
            fields = head.fields
            httpVersion = head.httpVersion
            self.url = url
        }

        /// Compared with the head itself, so a lookup makes no key.
        func matches(_ head: ResponseHead, url: URL) -> Bool {
            statusCode == head.statusCode && fields == head.fields && httpVersion == head.httpVersion
                && self.url == url
        }

        /// Heads above this are built every time: a slot should not pin much memory.
        static func isSmall(_ head: ResponseHead) -> Bool {
            head.fields.count <= 32 && head.fields.byteCount <= 4096
        }
    }

    let capacity: Int

    /// Slots replaced round-robin. A lock, not per-thread caches: lookups are
    /// short and come from few threads (engine thread, consumer threads).
    private let slots = Mutex<(entries: [Entry], next: Int)>(([], 0))

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// How many heads are kept now.
    var count: Int { slots.withLock { $0.entries.count } }

    /// The shared response for this head, built on the first request.
    func response(for head: ResponseHead, url: URL) -> HTTPURLResponse? {
        guard Key.isSmall(head) else { return ResponseConversion.httpResponse(head, url: url) }
        if let found = slots.withLock({ Self.lookup(head, url: url, in: $0) }) {
            return found
        }
        // Built outside the lock: it is the slow part.
        guard let made = ResponseConversion.httpResponse(head, url: url) else { return nil }
        return slots.withLock { slots in
            // Another thread may have stored the same head meanwhile: share its object.
            if let raced = Self.lookup(head, url: url, in: slots) { return raced }
            let entry = Entry(key: Key(head: head, url: url), response: made)
            if slots.entries.count < capacity {
                slots.entries.append(entry)
            } else {
                slots.entries[slots.next] = entry
                slots.next = (slots.next + 1) % capacity
            }
            return made
        }
    }

    /// The kept response for this head, looked for from the newest entry
    /// back: heads of one resource differ once a second (Date), so the match
    /// is usually the entry stored last, and a scan from the oldest compared
    /// about ten entries per hit. No key is built per lookup, and no entry
    /// copied: both retained the head's buffers, version and URL.
    private static func lookup(
        _ head: ResponseHead, url: URL, in slots: (entries: [Entry], next: Int)
    ) -> HTTPURLResponse? {
        let entries = slots.entries
        guard !entries.isEmpty else { return nil }
        // While filling, `next` stays 0 and the newest is the last entry;
        // once full, it is the one before `next`.
        var index = slots.next == 0 ? entries.count - 1 : slots.next - 1
        for _ in 0..<entries.count {
            if entries[index].key.matches(head, url: url) { return entries[index].response }
            index = index == 0 ? entries.count - 1 : index - 1
        }
        return nil
    }
}
