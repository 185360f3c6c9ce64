import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which requests a stub answers.
public struct RequestMatcher: Sendable, CustomStringConvertible {
    let method: String?
    let test: @Sendable (_ method: String, _ url: URL) -> Bool
    public let description: String

    /// Any request: `stub(.any, with: ...)`.
    public static var any: RequestMatcher { any(method: nil) }

    /// Any request (of `method`, if given): `.any()`, `.any(method: "POST")`.
    public static func any(method: String? = nil) -> RequestMatcher {
        RequestMatcher(method: method, test: { _, _ in true }, description: "\(method ?? "any method") any URL")
    }

    /// Exactly this URL (query included).
    public static func url(_ url: URL, method: String? = nil) -> RequestMatcher {
        let target = url.absoluteString
        return RequestMatcher(method: method, test: { $1.absoluteString == target }, description: "\(method ?? "any") \(target)")
    }

    /// Exactly this URL, written as a string.
    public static func url(_ string: String, method: String? = nil) -> RequestMatcher {
        RequestMatcher(method: method, test: { $1.absoluteString == string }, description: "\(method ?? "any") \(string)")
    }

    /// URLs that start with `prefix` (e.g. "https://api.example.com/v1/").
    public static func prefix(_ prefix: String, method: String? = nil) -> RequestMatcher {
        RequestMatcher(method: method, test: { $1.absoluteString.hasPrefix(prefix) }, description: "\(method ?? "any") \(prefix)*")
    }

    /// This path on any host (the query is ignored).
    public static func path(_ path: String, method: String? = nil) -> RequestMatcher {
        RequestMatcher(method: method, test: { $1.path == path }, description: "\(method ?? "any") */\(path.drop { $0 == "/" })")
    }

    /// This host, any path.
    public static func host(_ host: String, method: String? = nil) -> RequestMatcher {
        RequestMatcher(
            method: method, test: { $1.host?.lowercased() == host.lowercased() }, description: "\(method ?? "any") \(host)/*")
    }

    /// Whatever `predicate` accepts.
    public static func matching(
        _ description: String = "a predicate", _ predicate: @escaping @Sendable (_ method: String, _ url: URL) -> Bool
    ) -> RequestMatcher {
        RequestMatcher(method: nil, test: predicate, description: description)
    }

    func matches(method requestMethod: String, url: URL) -> Bool {
        if let method, method.uppercased() != requestMethod.uppercased() { return false }
        return test(requestMethod, url)
    }
}
