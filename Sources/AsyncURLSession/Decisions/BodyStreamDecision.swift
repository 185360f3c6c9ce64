internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The task needs its request body as a stream: at the start of a task made
/// with `uploadTask(withStreamedRequest:)`, and whenever a request with a
/// streamed body must be sent again (an authentication retry, a 307/308
/// redirect), as URLSession's `needNewBodyStream`.
///
/// Default (no answer by the next pull, or the decision dropped): no stream,
/// and the task fails with `URLError(.requestBodyStreamExhausted)`.
public final class BodyStreamDecision: Sendable {
    enum Answer: Sendable {
        case source(BodySource)
        case none
    }

    let core = DecisionCore<Answer>(default: .none)

    init() {}

    deinit { core.settleWithDefault() }

    /// The body comes from this sequence of chunks, read as the transfer
    /// needs them (a producer ahead by 1 MiB waits).
    public func provide<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks) where Chunks.Element == Data {
        core.settle(.source(.chunks(AnyDataSequence(chunks))))
    }

    /// The body comes from this sequence of chunks, then ends with the
    /// trailer fields `trailers` returns, asked once the last chunk is sent
    /// (so they may cover the body: a checksum, a signature). The body is
    /// sent chunked over HTTP/1.1, the only way libcurl 7.88.1 sends request
    /// trailers (never over HTTP/2), so the request must have no
    /// Content-Length. A name that is no token or a value with CR, LF or NUL
    /// fails the task before it is sent.
    public func provide<Chunks: AsyncSequence & Sendable>(
        _ chunks: Chunks, trailers: @escaping @Sendable () async throws -> [(name: String, value: String)]
    ) where Chunks.Element == Data {
        core.settle(.source(.chunks(AnyDataSequence(chunks, trailers: trailers))))
    }

    /// The body comes from this stream, read on a thread of its own. The task
    /// owns the stream from now on: do not read it elsewhere.
    public func provide(_ stream: InputStream) {
        core.settle(.source(.inputStream(InputStreamBox(stream))))
    }

    /// No body stream: the task fails.
    public func refuse() { core.settle(.none) }
}

/// Where a streamed body comes from.
enum BodySource: Sendable {
    case chunks(AnyDataSequence)
    case inputStream(InputStreamBox)
}

/// An `AsyncSequence` of `Data`, erased to what the task does with it:
/// copy its chunks into the transfer's body stream.
struct AnyDataSequence: Sendable {
    let pump: @Sendable (BodyStream) async -> Void
    /// The body ends with trailer fields.
    let sendsTrailers: Bool

    init<Chunks: AsyncSequence & Sendable>(
        _ chunks: Chunks, trailers: (@Sendable () async throws -> [(name: String, value: String)])? = nil
    ) where Chunks.Element == Data {
        sendsTrailers = trailers != nil
        pump = { stream in
            do {
                for try await chunk in chunks {
                    // False: the transfer stopped wanting bytes.
                    guard await stream.write(chunk) else { return }
                }
                guard let trailers else {
                    stream.finish()
                    return
                }
                let fields = try await trailers()
                if let problem = fields.lazy.compactMap({ HeaderValidation.problem(name: $0.name, value: $0.value) }).first {
                    stream.finish(error: URLError.make(
                        .requestBodyStreamExhausted, url: nil, reason: "A trailer field was refused: \(problem)"))
                    return
                }
                stream.finish(trailers: fields)
            } catch {
                stream.finish(error: URLError.make(
                    .requestBodyStreamExhausted, url: nil,
                    reason: "The request body sequence failed: \(error)"))
            }
        }
    }
}

/// Safe to send because ownership moves: the caller hands the stream over with
/// `provide(_:)` and from then on only the task's pump thread reads it.
final class InputStreamBox: @unchecked Sendable {
    let stream: InputStream
    init(_ stream: InputStream) { self.stream = stream }
}
