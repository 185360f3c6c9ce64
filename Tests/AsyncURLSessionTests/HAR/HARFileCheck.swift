import Foundation
import Testing

/// A HAR file read back with JSONSerialization (not our own model), and
/// checked against the shape HAR 1.2 requires.
struct HARFileCheck {
    let log: [String: Any]
    let entries: [[String: Any]]

    init(_ url: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let data = try Data(contentsOf: url)
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], sourceLocation: sourceLocation)
        log = try #require(root["log"] as? [String: Any], sourceLocation: sourceLocation)
        entries = try #require(log["entries"] as? [[String: Any]], sourceLocation: sourceLocation)
        #expect(log["version"] as? String == "1.2", sourceLocation: sourceLocation)
        #expect((log["creator"] as? [String: Any])?["name"] as? String == "AsyncURLSession", sourceLocation: sourceLocation)
        for entry in entries { Self.checkShape(entry, sourceLocation: sourceLocation) }
    }

    var statuses: [Int] { entries.map { response($0)["status"] as? Int ?? -1 } }

    func request(_ entry: [String: Any]) -> [String: Any] { entry["request"] as? [String: Any] ?? [:] }
    func response(_ entry: [String: Any]) -> [String: Any] { entry["response"] as? [String: Any] ?? [:] }
    func content(_ entry: [String: Any]) -> [String: Any] { response(entry)["content"] as? [String: Any] ?? [:] }

    /// The values of header `name` (any case) in `message`'s headers.
    func headerValues(_ name: String, in message: [String: Any]) -> [String] {
        (message["headers"] as? [[String: Any]] ?? []).compactMap { field in
            (field["name"] as? String)?.lowercased() == name.lowercased() ? field["value"] as? String : nil
        }
    }

    /// The body a content object holds (base64 decoded when it says so).
    func body(_ entry: [String: Any]) -> Data {
        let content = content(entry)
        guard let text = content["text"] as? String else { return Data() }
        if content["encoding"] as? String == "base64" { return Data(base64Encoded: text) ?? Data() }
        return Data(text.utf8)
    }

    static func checkShape(_ entry: [String: Any], sourceLocation: SourceLocation) {
        let started = entry["startedDateTime"] as? String ?? ""
        #expect((try? Date(started, strategy: .iso8601)) != nil || started.contains("T"), "startedDateTime \(started)", sourceLocation: sourceLocation)
        let request = entry["request"] as? [String: Any] ?? [:]
        let response = entry["response"] as? [String: Any] ?? [:]
        for key in ["method", "url", "httpVersion"] {
            #expect(request[key] is String, "request.\(key)", sourceLocation: sourceLocation)
        }
        for key in ["headers", "queryString", "cookies"] {
            #expect(request[key] is [Any], "request.\(key)", sourceLocation: sourceLocation)
        }
        for key in ["headersSize", "bodySize"] {
            #expect(request[key] is Int, "request.\(key)", sourceLocation: sourceLocation)
            #expect(response[key] is Int, "response.\(key)", sourceLocation: sourceLocation)
        }
        #expect(response["status"] is Int, sourceLocation: sourceLocation)
        #expect(response["statusText"] is String, sourceLocation: sourceLocation)
        #expect(response["headers"] is [Any] && response["cookies"] is [Any], sourceLocation: sourceLocation)
        #expect(response["redirectURL"] is String, sourceLocation: sourceLocation)
        let content = response["content"] as? [String: Any] ?? [:]
        #expect(content["size"] is Int && content["mimeType"] is String, "content \(content)", sourceLocation: sourceLocation)
        #expect(entry["cache"] is [String: Any], sourceLocation: sourceLocation)
        let timings = entry["timings"] as? [String: Any] ?? [:]
        var sum = 0.0
        for key in ["blocked", "dns", "connect", "ssl", "send", "wait", "receive"] {
            let value = (timings[key] as? NSNumber)?.doubleValue
            #expect(value != nil, "timings.\(key)", sourceLocation: sourceLocation)
            guard let value else { continue }
            #expect(value == -1 || value >= 0, "timings.\(key) = \(value)", sourceLocation: sourceLocation)
            if ["send", "wait", "receive"].contains(key) { #expect(value >= 0, sourceLocation: sourceLocation) }
            // HAR 1.2: ssl is counted inside connect.
            if key != "ssl", value > 0 { sum += value }
        }
        let time = (entry["time"] as? NSNumber)?.doubleValue ?? -1
        #expect(abs(time - sum) < 0.01, "time \(time) vs the timings' sum \(sum)", sourceLocation: sourceLocation)
    }
}

/// A path in a directory of its own, removed at the end of `body`.
func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("har-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await body(directory)
}
