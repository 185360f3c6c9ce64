import Foundation
import Glibc
import Synchronization

@testable import CurlEngine

/// Records a transfer's outcome, and the thread that delivered it, for a
/// waiting test.
final class CompletionRecorder: TransferDelegate {
    private let outcome = Mutex<(TransferOutcome, pthread_t)?>(nil)
    private let done = DispatchSemaphore(value: 0)

    func transferDidReceiveHead(_ head: consuming ResponseHead, of id: TransferID) {}
    func transferDidReceiveBody(_ bytes: UnsafeRawBufferPointer, of id: TransferID) -> BodyVerdict { .accepted }
    func transferDidSendBody(totalBytesSent: Int64, totalBytesExpected: Int64, of id: TransferID) {}

    func transferDidComplete(_ outcome: TransferOutcome, of id: TransferID) {
        self.outcome.withLock { $0 = (outcome, pthread_self()) }
        done.signal()
    }

    /// Whether the transfer has ended (without waiting).
    var hasCompleted: Bool { outcome.withLock { $0 != nil } }

    /// The thread that told the outcome, once it was told.
    var completingThread: pthread_t? { outcome.withLock { $0?.1 } }

    func wait(seconds: Double) -> TransferOutcome? {
        guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        done.signal()  // later waits see it too
        return outcome.withLock { $0?.0 }
    }
}
