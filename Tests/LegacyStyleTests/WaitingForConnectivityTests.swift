import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport
import URLSessionCompat

/// Counts `taskIsWaitingForConnectivity` and signals completion.
final class ConnectivityDelegate: NSObject, URLSessionDataDelegate, Sendable {
    let waits = Mutex(0)
    let completed = Signal()
    let error = Mutex<(any Error)?>(nil)
    let received = Mutex(Data())

    func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask) {
        waits.withLock { $0 += 1 }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        received.withLock { $0.append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        self.error.withLock { $0 = error }
        completed.fire()
    }
}

@Suite struct WaitingForConnectivityTests {
    @Test func classicDelegate_isToldOnce_andTheTaskSucceedsWhenTheServerComesUp() async throws {
        // Held until the server starts: no other test's server can take it.
        let reservation = try PortReservation(forALateServer: true)
        let port = reservation.port
        let configuration = legacyConfiguration()
        configuration.waitsForConnectivity = true
        let delegate = ConnectivityDelegate()
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        session.dataTask(with: URL(string: "http://127.0.0.1:\(port)/bytes/7")!).resume()
        try await Task.sleep(for: .milliseconds(600))
        // The server binds beside the reservation, which is let go after.
        let server = try await LoopbackServer.start(LoopbackServer.Options(port: port))
        reservation.release()
        try await withTimeLimit { await delegate.completed.wait() }
        try await server.shutdown()
        #expect(delegate.error.withLock { $0 } == nil)
        #expect(delegate.waits.withLock { $0 } == 1)
        #expect(delegate.received.withLock { $0.count } == 7)
        session.finishTasksAndInvalidate()
    }
}
