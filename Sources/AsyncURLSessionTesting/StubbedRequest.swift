import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request a `StubTransport` answered (or refused), as the network would
/// have received it: method, URL, header fields and the whole body.
public struct StubbedRequest: Sendable {
    public let method: String
    public let url: URL
    /// Header fields as sent (the session's additional headers, cookies,
    /// `User-Agent`, `Accept-Encoding` and a Basic credential included).
    public let headerFields: [String: String]
    /// The body as read by the stub (upload tasks, `httpBody` and streamed
    /// bodies alike); empty when there was none.
    public let body: Data
    /// The credential this request answers a challenge with, if any.
    public let credential: URLCredential?

    /// The value of header `name` (without case).
    public func value(forHTTPHeaderField name: String) -> String? {
        headerFields.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    public var description: String { "\(method) \(url.absoluteString)" }
}
