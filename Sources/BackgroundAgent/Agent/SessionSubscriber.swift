import AgentWire
import Foundation
import Synchronization

/// The program holding a background session, as the agent sees it: the
/// updates waiting to be sent on its connection. The agent adds them from
/// its actor; the connection's own thread takes and sends them, so a slow
/// program never holds the agent up.
package final class SessionSubscriber: Sendable {
    package let session: String
    /// The program's process (from its socket's peer credentials), for the
    /// refusal another program gets.
    package let process: Int32
    private let pending = Mutex<[BackgroundTransferStatus]>([])
    private let signal = DispatchSemaphore(value: 0)

    package init(session: String, process: Int32) {
        self.session = session
        self.process = process
    }

    /// Queues `status`, replacing an older one of the same transfer not sent
    /// yet (progress is about the latest bytes, not every step).
    func post(_ status: BackgroundTransferStatus) {
        pending.withLock { pending in
            if let index = pending.lastIndex(where: { $0.id == status.id }), !pending[index].hasEnded {
                pending[index] = status
            } else {
                pending.append(status)
            }
        }
        signal.signal()
    }

    /// What is waiting, after at most `seconds` of waiting for something.
    package func take(waiting seconds: Double) -> [BackgroundTransferStatus] {
        _ = signal.wait(timeout: .now() + seconds)
        return pending.withLock { pending in
            defer { pending = [] }
            return pending
        }
    }
}
