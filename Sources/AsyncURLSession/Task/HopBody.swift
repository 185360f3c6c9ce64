internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The body a hop sends: known now, or a stream to ask for (the request's
/// own `httpBodyStream` once, else a `needBodyStream` decision).
enum HopBody {
    case ready(TransferRequest.Body)
    case needsStream(length: Int64?)

    /// The body `request` sends, for a task whose own body is `upload`. GET
    /// and HEAD hops (after a 301/302/303 rewrote the method) send none.
    static func of(_ request: URLRequest, upload: UploadSource) -> HopBody {
        let method = (request.httpMethod ?? "GET").uppercased()
        let sendsBody = method != "GET" && method != "HEAD"
        let length = request.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) }.flatMap { $0 >= 0 ? $0 : nil }
        switch upload {
        case .data(let data): return .ready(sendsBody ? .data(data) : .none)
        case .file(let url): return .ready(sendsBody ? .file(url) : .none)
        case .streamed: return sendsBody ? .needsStream(length: length) : .ready(.none)
        case .none:
            // HEAD never sends a body, and an empty `httpBody` is no body
            // for GET either (Apple sends neither).
            guard method != "HEAD" else { return .ready(.none) }
            if let body = request.httpBody { return .ready(body.isEmpty && method == "GET" ? .none : .data(body)) }
            if request.httpBodyStream != nil { return .needsStream(length: length) }
            return .ready(.none)
        }
    }
}
