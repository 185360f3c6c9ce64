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

/// /duplex-echo?bytes=N[&declare=1]: full duplex. The response head goes out at once; each
/// piece of the request body is sent back as it arrives; after N bytes the response ends,
/// whether or not the request body has (the rest of it is read and dropped). With declare=1
/// the head says Content-Length: N, else the body is chunked (HTTP/1.1) or of unknown length
/// (HTTP/2).
final class DuplexEcho {
    private(set) var remaining: Int
    let declaresLength: Bool
    /// The response has ended (N bytes sent back, or the request ended first).
    var responseEnded = false

    init(_ request: RequestInfo) throws(BadRequest) {
        let query = Dictionary(request.target.query, uniquingKeysWith: { first, _ in first })
        guard let text = query["bytes"], let bytes = Int(text), bytes > 0, bytes <= 1 << 30 else {
            throw BadRequest(message: "/duplex-echo needs bytes=N (1 to 2^30)")
        }
        remaining = bytes
        declaresLength = query["declare"] == "1"
    }

    var head: HTTPResponseHead {
        var headers: HTTPHeaders = ["Content-Type": "application/octet-stream"]
        if declaresLength { headers.add(name: "Content-Length", value: String(remaining)) }
        return HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)
    }

    /// The part of `buffer` to send back (nothing once N bytes went back).
    func echo(_ buffer: ByteBuffer) -> ByteBuffer? {
        guard !responseEnded, remaining > 0, buffer.readableBytes > 0 else { return nil }
        let count = min(remaining, buffer.readableBytes)
        remaining -= count
        return buffer.getSlice(at: buffer.readerIndex, length: count)
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
