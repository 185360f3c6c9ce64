internal import CurlEngine
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
///
/// Cost: with a logger at trace, a small GET makes four lines, so the lines
/// are built from bytes (header names folded ASCII-wise, no intermediate
/// arrays, the seconds from integer milliseconds) and only inside swift-log's
/// autoclosures, i.e. only when the level lets the line through. Anything
/// not plain ASCII takes the original String path, so what is redacted never
/// depends on the fast path.
struct TaskLog: Sendable {
    let logger: Logger
    /// The configuration's `sensitiveHeaderNames` (lowercased, any names).
    let sensitiveNames: Set<String>
    /// Whether `sensitiveNames` holds a name beyond `alwaysRedacted`: when
    /// not, an ASCII header name is checked against the four fixed names
    /// alone, with no String made and nothing hashed.
    let hasExtraSensitiveNames: Bool

    private static let nextRequestID = Atomic<Int>(1)

    init?(configuration: SessionConfiguration) {
        guard var logger = configuration.logger else { return nil }
        let id = Self.nextRequestID.add(1, ordering: .relaxed).oldValue
        logger[metadataKey: "request-id"] = .string(String(id))
        self.logger = logger
        let names = configuration.sensitiveHeaderNames
        sensitiveNames = names
        hasExtraSensitiveNames = !names.isSubset(of: Self.alwaysRedacted)
    }

    static let alwaysRedacted: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]
    static let redactedValue = "<redacted>"

    // MARK: Lines

    func started(_ request: URLRequest, kind: TaskKind) {
        logger.debug("task started", metadata: [
            "kind": .string(Self.name(of: kind)), "method": .string(request.httpMethod ?? "GET"),
            "url": .string(Self.redacted(request.url)),
        ])
    }

    func hop(_ method: String, url: String, via source: String, headers: [(name: String, value: String)]) {
        guard logger.logLevel <= .trace else { return }
        logger.trace("hop sent", metadata: [
            "method": .string(method), "url": .string(Self.redacted(url)), "via": .string(source),
            "headers": .string(redacted(headers)),
        ])
    }

    func response(status: Int, headers: ResponseHeaderFields) {
        guard logger.logLevel <= .trace else { return }
        logger.trace("response", metadata: ["status": .string(String(status)), "headers": .string(redacted(headers))])
    }

    func decision(_ kind: String, _ detail: String) {
        logger.trace("decision", metadata: ["decision": .string(kind), "detail": .string(detail)])
    }

    func ended(error: URLError?, bytesReceived: Int64, seconds: Double) {
        // Built inside the autoclosure: nothing is made below the level.
        logger.debug(
            error == nil ? "task finished" : "task failed",
            metadata: Self.endMetadata(error: error, bytesReceived: bytesReceived, seconds: seconds))
    }

    private static func endMetadata(error: URLError?, bytesReceived: Int64, seconds: Double) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "bytes-received": .string(String(bytesReceived)), "seconds": .string(Self.formatted(seconds: seconds)),
        ]
        if let error {
            metadata["error"] = .string(String(error.code.rawValue))
            metadata["reason"] = .string(error.localizedDescription)
        }
        return metadata
    }

    /// As `"\(kind)"` (the case's name), without the runtime's reflection.
    static func name(of kind: TaskKind) -> String {
        switch kind {
        case .data: "data"
        case .upload: "upload"
        case .download: "download"
        }
    }

    /// As `String(format: "%.3f", seconds)`, character for character, from
    /// integer milliseconds: the product by 1000 is corrected by its exact
    /// rounding error (a fused multiply-add), so a value at or near a half
    /// millisecond rounds as printf rounds the exact binary value (to
    /// even on a tie). Beyond 4e12 s (the product's spacing nears a
    /// millisecond), infinities and NaN go to `String(format:)`.
    static func formatted(seconds: Double) -> String {
        let magnitude = seconds.magnitude
        guard magnitude < 4e12 else { return String(format: "%.3f", seconds) }
        let product = magnitude * 1000
        // magnitude * 1000 - product, exactly.
        let error = (-product).addingProduct(magnitude, 1000)
        var rounded = product.rounded(.toNearestOrEven)
        // Exact too: the two are at most half apart. Only a product on a
        // half can round the wrong way, and its error says which way.
        let fraction = product - rounded
        if fraction == 0.5, error > 0 {
            rounded += 1
        } else if fraction == -0.5, error < 0 {
            rounded -= 1
        }
        let milliseconds = Int64(rounded)
        let thousandths = Int(milliseconds % 1000)
        let tail = String(unsafeUninitializedCapacity: 4) { buffer in
            buffer[0] = UInt8(ascii: ".")
            buffer[1] = UInt8(ascii: "0") + UInt8(thousandths / 100)
            buffer[2] = UInt8(ascii: "0") + UInt8(thousandths / 10 % 10)
            buffer[3] = UInt8(ascii: "0") + UInt8(thousandths % 10)
            return 4
        }
        var text = seconds.sign == .minus ? "-" : ""
        text += String(milliseconds / 1000)
        text += tail
        return text
    }
}
