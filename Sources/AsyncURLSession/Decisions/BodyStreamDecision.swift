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

    init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks) where Chunks.Element == Data {
        pump = { stream in
            do {
                for try await chunk in chunks {
                    // False: the transfer stopped wanting bytes.
                    guard await stream.write(chunk) else { return }
                }
                stream.finish()
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
