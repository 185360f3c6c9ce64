import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a classic stream task's properties read (see `ConnectionTaskModel`).
typealias StreamTaskModel = ConnectionTaskModel<StreamTask>

/// What a classic stream task records itself: the core's `StreamTask`
/// counts no bytes and keeps no error of URLSessionTask's kind.
struct StreamTaskRecord: Sendable {
    var error: URLError?
    var bytesSent: Int64 = 0
    var bytesReceived: Int64 = 0
}

extension StreamTask: ClassicConnection {
    static var emptyClassicRecord: StreamTaskRecord { StreamTaskRecord() }

    /// A stream task sends no request and gets no response.
    var classicRequest: URLRequest? { nil }
    var classicResponse: URLResponse? { nil }
    var isClosingOnItsOwn: Bool { false }

    /// The error the task ended with, as recorded (set when it ends).
    func classicError(ended: Bool, _ record: StreamTaskRecord) -> (any Error)? { record.error }
    func classicBytesReceived(_ record: StreamTaskRecord) -> Int64 { record.bytesReceived }
    func classicBytesSent(_ record: StreamTaskRecord) -> Int64 { record.bytesSent }
}

extension ConnectionTaskModel<StreamTask> {
    func noteRead(_ count: Int) { record { $0.bytesReceived += Int64(count) } }
    func noteWritten(_ count: Int) { record { $0.bytesSent += Int64(count) } }

    func markEnded(_ error: URLError?) {
        markEnded { $0.error = error }
    }
}
