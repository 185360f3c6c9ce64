import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a span records as its `exception` event for a failed task or hop
/// (issue 58). Tracers describe a recorded error with `String(describing:)`
/// (swift-otel's `exception.message`) and name its type with
/// `type(of:)` (`exception.type`): Foundation's `URLError` describes
/// itself as an NSError dump, so the span records this instead, whose
/// description is the error's reason as the task reports it
/// ("Could not connect to 127.0.0.1 port 1: Connection refused") and whose
/// type is still called `URLError`.
enum SpanError {
    struct URLError: Error, CustomStringConvertible {
        /// The code's name, as in `error.type` (`cannotConnectToHost`).
        let code: String
        /// The reason the task's error gives (its localized description).
        let reason: String

        init(_ error: Foundation.URLError) {
            code = TaskObservation.name(of: error.code)
            reason = error.userInfo[NSLocalizedDescriptionKey] as? String ?? code
        }

        var description: String { reason }
    }
}
