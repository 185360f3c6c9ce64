internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response kept by a `ResponseCache`: its status, fields and body, when
/// it was requested and received (for its age), and the request fields it
/// varies on. A value: change a copy and store it to change the cache.
public struct CachedResponse: Sendable {
    /// Where a response may be kept, as `URLCache.StoragePolicy`.
    public enum StoragePolicy: Int, Sendable, Codable {
        case allowed
        case allowedInMemoryOnly
        case notAllowed
    }

    public let url: URL
    public let statusCode: Int
    /// "HTTP/1.1", "HTTP/2", ...
    public let httpVersion: String
    public var data: Data
    public var storagePolicy: StoragePolicy
    /// The fields as received, in order (repeated names kept).
    var fields: CachedHeaderFields
    /// When the request that produced it was sent and the response came
    /// (RFC 9111's request_time and response_time).
    var requestDate: Date
    var responseDate: Date
    /// The values the request had for each field its Vary names (lowercased
    /// names; nil for a field it lacked), filled in when stored.
    var varyValues: [String: String?] = [:]

    /// A response to store (with `ResponseCache.storeCachedResponse`), or a
    /// changed one to answer a `willCacheResponse` decision with.
    public init(response: HTTPURLResponse, data: Data, storagePolicy: StoragePolicy = .allowed) {
        url = response.url ?? URL(fileURLWithPath: "/")
        statusCode = response.statusCode
        httpVersion = "HTTP/1.1"
        self.data = data
        self.storagePolicy = storagePolicy
        var fields = CachedHeaderFields()
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields.append(name: name, value: value) }
        }
        self.fields = fields
        requestDate = Date()
        responseDate = requestDate
    }

    init(
        url: URL, statusCode: Int, httpVersion: String, fields: CachedHeaderFields, data: Data,
        requestDate: Date, responseDate: Date, storagePolicy: StoragePolicy = .allowed
    ) {
        self.url = url
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        self.fields = fields
        self.data = data
        self.requestDate = requestDate
        self.responseDate = responseDate
        self.storagePolicy = storagePolicy
    }

    /// The stored head as Foundation's response.
    public var response: HTTPURLResponse {
        HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: httpVersion, headerFields: fields.joined)
            ?? HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: nil, headerFields: nil)!
    }

    /// The header fields, repeated names joined with ", " (as HTTPURLResponse shows them).
    public var headerFields: [String: String] { fields.joined }

    /// Bytes this response costs a cache: its body and fields.
    var cost: Int { data.count + fields.byteCount + 256 }

    /// This response after a 304 that revalidated it (RFC 9111 §4.3.4): the
    /// 304's fields replace the stored ones of the same name (except those
    /// describing the stored body), and its times become the new times.
    func updated(byNotModified fields304: CachedHeaderFields, requestDate: Date, responseDate: Date) -> CachedResponse {
        var merged = fields
        let kept: Set<String> = ["content-length", "content-encoding", "transfer-encoding", "content-range"]
        let replaced = Set(fields304.names.map { $0.lowercased() }).subtracting(kept)
        merged.removeAll { replaced.contains($0.lowercased()) }
        for pair in fields304.pairs where replaced.contains(pair.name.lowercased()) {
            merged.append(name: pair.name, value: pair.value)
        }
        var updated = self
        updated.fields = merged
        updated.requestDate = requestDate
        updated.responseDate = responseDate
        return updated
    }
}

/// Header fields in order, looked up by name with ASCII case ignored.
struct CachedHeaderFields: Sendable, Codable, Equatable {
    private(set) var pairs: [Pair] = []

    struct Pair: Sendable, Codable, Equatable {
        var name: String
        var value: String
    }

    init() {}

    init(_ pairs: some Sequence<(name: String, value: String)>) {
        for pair in pairs { append(name: pair.name, value: pair.value) }
    }

    mutating func append(name: String, value: String) {
        pairs.append(Pair(name: name, value: value))
    }

    mutating func removeAll(where predicate: (String) -> Bool) {
        pairs.removeAll { predicate($0.name) }
    }

    var names: [String] { pairs.map(\.name) }

    /// Byte comparisons, not `caseInsensitiveCompare`: that goes through
    /// NSString and Unicode folding, and these lookups run on the engine
    /// thread for every response a cache may store (a tenth of the CPU of
    /// 1 KiB GETs with cacheable responses).
    func values(named name: String) -> [String] {
        var found: [String] = []
        for pair in pairs where pair.name.equalsIgnoringASCIICase(name) { found.append(pair.value) }
        return found
    }

    func value(named name: String) -> String? {
        let values = values(named: name)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// One value per name, repeated ones joined with ", ".
    var joined: [String: String] {
        var result: [String: String] = [:]
        var canonical: [String: String] = [:]
        for pair in pairs {
            let key = pair.name.lowercased()
            if let name = canonical[key] {
                result[name] = result[name]! + ", " + pair.value
            } else {
                canonical[key] = pair.name
                result[pair.name] = pair.value
            }
        }
        return result
    }

    var byteCount: Int { pairs.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 } }
}
