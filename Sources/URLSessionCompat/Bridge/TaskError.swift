import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLError {
    /// An error the adapter itself fails a task with, as Apple's: it says
    /// what went wrong and names the failing URL under both
    /// `NSErrorFailingURLKey` and `NSErrorFailingURLStringKey` (the second
    /// spelled out: its constant is deprecated in swift-corelibs-foundation).
    static func adapter(_ code: URLError.Code, _ reason: String, url: URL?) -> URLError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: reason]
        if let url {
            info[NSURLErrorFailingURLErrorKey] = url
            info["NSErrorFailingURLStringKey"] = url.absoluteString
        }
        return URLError(code, userInfo: info)
    }
}
