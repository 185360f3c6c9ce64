import Foundation

/// What to do with a data task's response, as URLSession's
/// `ResponseDisposition`. Body bytes wait (buffered up to the stream's high
/// watermark) until it is settled. Default: allow.
public final class ResponseDecision: Sendable {
    public enum Answer: Sendable, Equatable {
        case allow
        /// The task completes with `URLError(.cancelled)`.
        case cancel
        /// The rest of the body goes to a file and the task continues as a
        /// download: `downloadProgress` events, then `downloaded(URL)`.
        /// (Ignored by `data(for:)`, which must return the body as Data.)
        case becomeDownload
    }

    let core = DecisionCore<Answer>(default: .allow)

    init() {}

    deinit { core.settleWithDefault() }

    public func allow() { core.settle(.allow) }
    public func cancel() { core.settle(.cancel) }
    public func becomeDownload() { core.settle(.becomeDownload) }

    public var answer: Answer? { core.answer }
}
