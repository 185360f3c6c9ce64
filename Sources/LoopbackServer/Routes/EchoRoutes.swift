import Crypto
import NIOCore
import NIOHTTP1

/// /echo: length and SHA-256 of the request body, computed as it arrives, so a 1 GiB upload
/// is never held. A class so the handler updates it in place while the body streams.
final class EchoDigest {
    private var hasher = SHA256()
    private var length = 0

    func consume(_ buffer: ByteBuffer) {
        length += buffer.readableBytes
        buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
    }

    /// 200 with the JSON description of the request.
    /// `trailers`: the fields after a chunked request body, listed as
    /// "trailers" as the headers are.
    func response(for head: HTTPRequestHead, trailers: HTTPHeaders? = nil) -> ResponsePlan {
        let digest = Hex.string(hasher.finalize())
        let headerList = head.headers.map { "[\(JSON.string($0.name)),\(JSON.string($0.value))]" }
        let trailerList = (trailers ?? [:]).map { "[\(JSON.string($0.name)),\(JSON.string($0.value))]" }
        let json = """
            {"method":\(JSON.string(head.method.rawValue)),"uri":\(JSON.string(head.uri)),\
            "headers":[\(headerList.joined(separator: ","))],\
            "trailers":[\(trailerList.joined(separator: ","))],\
            "bodyLength":\(length),"bodySHA256":\(JSON.string(digest))}
            """
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        return .text(.ok, json, headers: headers)
    }
}

/// /echo-body: collects the request body (up to `limit`) to send it back verbatim.
final class BodyCollector {
    /// /echo-body is meant for small bodies; past this the answer is 413 instead of more memory.
    static let limit = 64 * 1024 * 1024

    private var body = ByteBuffer()
    private var tooLarge = false

    func consume(_ buffer: ByteBuffer) {
        guard !tooLarge else { return }
        guard body.readableBytes + buffer.readableBytes <= Self.limit else {
            tooLarge = true
            body = ByteBuffer()
            return
        }
        var buffer = buffer
        body.writeBuffer(&buffer)
    }

    /// 200 with the body and the request's Content-Type (if it had one).
    func response(for head: HTTPRequestHead) -> ResponsePlan {
        guard !tooLarge else {
            return .text(.payloadTooLarge, "request body larger than \(Self.limit) bytes\n")
        }
        var headers = HTTPHeaders()
        if let contentType = head.headers.first(name: "content-type") {
            headers.add(name: "Content-Type", value: contentType)
        }
        return .fixed(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers), body: body)
    }
}

/// The little JSON writing /echo needs.
enum JSON {
    /// `text` as a JSON string literal, quotes included.
    static func string(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
