import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization

/// One task's lines in the configuration's `Logger`: its start and end at
/// debug level; each hop, response and decision at trace level. Every line
/// carries the task's `request-id` (unique in the process), so the lines of
/// tasks that run at once can be told apart.
///
/// Never a secret: URL passwords, and the values of Authorization,
/// Proxy-Authorization, Cookie and Set-Cookie (plus the configuration's
/// `sensitiveHeaderNames`) are written as `<redacted>`.
///
/// Made only when the configuration has a logger: a task without one holds
/// nil and each log point is one nil check.
struct TaskLog: Sendable {
    let logger: Logger
    private let sensitive: @Sendable (String) -> Bool

    private static let nextRequestID = Atomic<Int>(1)

    init?(configuration: SessionConfiguration) {
        guard var logger = configuration.logger else { return nil }
        let id = Self.nextRequestID.add(1, ordering: .relaxed).oldValue
        logger[metadataKey: "request-id"] = "\(id)"
        self.logger = logger
        let extra = configuration.sensitiveHeaderNames
        sensitive = { name in Self.alwaysRedacted.contains(name) || extra.contains(name) }
    }

    static let alwaysRedacted: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]
    static let redactedValue = "<redacted>"

    // MARK: Lines

    func started(_ request: URLRequest, kind: String) {
        logger.debug("task started", metadata: [
            "kind": "\(kind)", "method": "\(request.httpMethod ?? "GET")", "url": "\(Self.redacted(request.url))",
        ])
    }

    func hop(_ method: String, url: String, via source: String, headers: [(name: String, value: String)]) {
        guard logger.logLevel <= .trace else { return }
        logger.trace("hop sent", metadata: [
            "method": "\(method)", "url": "\(Self.redacted(url))", "via": "\(source)",
            "headers": .string(redacted(headers)),
        ])
    }

    func response(status: Int, headers: [(name: String, value: String)]) {
        guard logger.logLevel <= .trace else { return }
        logger.trace("response", metadata: ["status": "\(status)", "headers": .string(redacted(headers))])
    }

    func decision(_ kind: String, _ detail: String) {
        logger.trace("decision", metadata: ["decision": "\(kind)", "detail": "\(detail)"])
    }

    func ended(error: URLError?, bytesReceived: Int64, seconds: Double) {
        var metadata: Logger.Metadata = [
            "bytes-received": "\(bytesReceived)", "seconds": "\(String(format: "%.3f", seconds))",
        ]
        if let error {
            metadata["error"] = "\(error.code.rawValue)"
            metadata["reason"] = "\(error.localizedDescription)"
        }
        logger.debug(error == nil ? "task finished" : "task failed", metadata: metadata)
    }

    // MARK: Redaction

    private func redacted(_ headers: [(name: String, value: String)]) -> String {
        headers.map { name, value in
            "\(name): \(sensitive(name.lowercased()) ? Self.redactedValue : value)"
        }.joined(separator: "; ")
    }

    static func redacted(_ url: URL?) -> String {
        guard let url else { return "-" }
        return redacted(url.absoluteString)
    }

    /// The URL with its password (and user) replaced.
    static func redacted(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return url }
        return String(url[..<schemeEnd.upperBound]) + redactedValue + String(rest[at...])
    }
}
