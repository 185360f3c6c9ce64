internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// What one recorded task's hops sent and received, beyond its metrics:
/// each hop's request as it went out (headers the session added included),
/// each response's status and body (up to the recorder's limit). Made only
/// for a task whose configuration has a `HARRecorder`; `TaskCore` holds nil
/// otherwise, and each of its calls here is then one nil check.
///
/// Its own lock, never the task's: the task calls in from its engine
/// callbacks with no lock held, and the entries are built and written at
/// the task's end, outside any lock of the task.
final class HARTaskCapture: Sendable {
    struct SentRequest: Sendable {
        let method: String
        let url: String
        let headers: [(name: String, value: String)]
        /// The request body, when the recorder keeps them and it was data.
        let body: Data?
    }

    /// One response head and the body that followed it.
    struct ReceivedResponse: Sendable {
        let hop: HopID
        let status: Int
        /// Up to the recorder's `maximumBodySize`.
        var body = Data()
        /// All of the body's (decoded) bytes, kept or not.
        var size = 0
        /// For a head the response cache absorbed (a 304 that revalidated
        /// the stored response): its fields, since the task's transaction
        /// has no response for it.
        var absorbedFields: [(name: String, value: String)]?
    }

    private struct State {
        var sent: [SentRequest] = []
        var received: [ReceivedResponse] = []
    }

    let recorder: HARRecorder
    /// The configuration's `sensitiveHeaderNames`, redacted as the log does.
    let sensitiveHeaderNames: Set<String>
    private let state = Mutex(State())

    init(recorder: HARRecorder, sensitiveHeaderNames: Set<String>) {
        self.recorder = recorder
        self.sensitiveHeaderNames = sensitiveHeaderNames
    }

    /// A hop's request goes out (to the network or a local transport).
    func sent(_ request: TransferRequest) {
        var body: Data?
        if recorder.options.recordsRequestBodies, case .data(let data) = request.body {
            body = data.prefix(recorder.options.maximumBodySize)
        }
        let sent = SentRequest(
            method: request.method, url: request.url, headers: Self.wireHeaders(of: request), body: body)
        state.withLock { $0.sent.append(sent) }
    }

    /// The request's headers, and those libcurl adds to them when they lack
    /// one (as `curl -v` shows): Host, User-Agent, Accept, Accept-Encoding.
    static func wireHeaders(of request: TransferRequest) -> [(name: String, value: String)] {
        var headers = request.headers
        func lacks(_ name: String) -> Bool {
            !headers.contains { $0.name.caseInsensitiveCompare(name) == .orderedSame }
        }
        if lacks("Host"), let components = URLComponents(string: request.url), let host = components.host {
            let authority = components.port.map { "\(host):\($0)" } ?? host
            headers.insert((name: "Host", value: authority), at: 0)
        }
        if lacks("User-Agent"), let agent = request.userAgent { headers.append((name: "User-Agent", value: agent)) }
        if lacks("Accept") { headers.append((name: "Accept", value: "*/*")) }
        if lacks("Accept-Encoding"), let encodings = request.acceptEncoding {
            headers.append((name: "Accept-Encoding", value: encodings.isEmpty ? libcurlEncodings : encodings))
        }
        return headers
    }

    /// What libcurl sends for `CURLOPT_ACCEPT_ENCODING` "" (every decoder
    /// it was built with, in its order).
    private static let libcurlEncodings: String = {
        let features = Set(NetworkLibrary.features.map { $0.lowercased() })
        var names: [String] = []
        if features.contains("libz") { names += ["deflate", "gzip"] }
        if features.contains("brotli") { names.append("br") }
        if features.contains("zstd") { names.append("zstd") }
        return names.joined(separator: ", ")
    }()

    /// A hop's response head came.
    func receivedHead(status: Int, hop: HopID) {
        state.withLock { $0.received.append(ReceivedResponse(hop: hop, status: status)) }
    }

    /// A head the response cache absorbed (a 304 that revalidated).
    func absorbedHead(_ head: borrowing ResponseHead, hop: HopID) {
        let fields = head.fields.indices.map { (name: head.fields.name(at: $0), value: head.fields.value(at: $0)) }
        var received = ReceivedResponse(hop: hop, status: head.statusCode)
        received.absorbedFields = fields
        state.withLock { $0.received.append(received) }
    }

    /// Body bytes of hop `hop`'s response (decoded, as the task sees them).
    func receivedBody(_ bytes: UnsafeRawBufferPointer, hop: HopID) {
        let limit = recorder.options.maximumBodySize
        state.withLock { state in
            guard let index = state.received.lastIndex(where: { $0.hop == hop }) else { return }
            state.received[index].size += bytes.count
            let room = limit - state.received[index].body.count
            if room > 0 { state.received[index].body.append(contentsOf: bytes.prefix(room)) }
        }
    }

    /// The task ended: one entry per transaction, written at once.
    func taskEnded(metrics: TaskMetrics?, error: URLError?) {
        guard let metrics, !metrics.transactionMetrics.isEmpty else { return }
        let (sent, received) = state.withLock { state in
            defer { state = State() }
            return (state.sent, state.received)
        }
        var builder = HAREntryBuilder(
            options: recorder.options, sensitiveHeaderNames: sensitiveHeaderNames, sent: sent, received: received)
        let transactions = metrics.transactionMetrics
        var entries: [HAR.Entry] = []
        entries.reserveCapacity(transactions.count)
        for index in transactions.indices {
            let last = index == transactions.count - 1
            entries.append(builder.entry(for: transactions[index], error: last ? error : nil))
        }
        recorder.append(entries)
    }
}
