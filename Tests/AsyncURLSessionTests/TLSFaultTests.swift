import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Testing
import TestSupport

@testable import AsyncURLSession

/// A TLS connection that breaks in the middle of a body (`/drop/N?how=`): a
/// close_notify before the declared length, a TCP reset with no close_notify
/// (a truncation), and bytes that are no record of the session (what a
/// tampering middlebox or a broken server sends; OpenSSL answers it with a
/// bad_record_mac alert). Each ends the task with a clear `URLError`, keeps
/// the bytes already received for an events consumer, and never lets the
/// broken connection serve the next request.
@Suite struct TLSFaultTests {
    private func session(_ server: LoopbackServer) -> Session {
        var configuration = testConfiguration(trusting: server)
        configuration.responseCache = nil
        return Session(configuration: configuration)
    }

    /// Fetches `/drop/65536?after=16384&how=<how>`, then a good URL on the same session.
    private func breakThenFetch(how: String, http2: Bool) async throws -> (URLError?, bodyBytes: Int, connections: Int) {
        try await withServer(LoopbackServer.Options(tls: true, http2: http2)) { server in
            let session = session(server)
            let task = session.dataTask(with: server.url("/drop/65536?after=16384&how=\(how)"))
            task.resume()
            let recorded = await record(task)
            let failure = recorded.error as? URLError
            #expect(failure != nil, "not a URLError: \(String(describing: recorded.error))")
            let received = recorded.body.count
            let (data, response) = try await session.data(from: server.url("/bytes/10"))
            #expect(data.count == 10)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            return (failure, received, server.acceptedConnections)
        }
    }

    @Test(arguments: [false, true])
    func closeNotifyBeforeTheDeclaredLength_isConnectionLost(http2: Bool) async throws {
        let (error, received, _) = try await breakThenFetch(how: "close", http2: http2)
        #expect(error?.code == .networkConnectionLost)
        #expect(received <= 16384)
    }

    @Test(arguments: [false, true])
    func resetWithoutCloseNotify_isConnectionLost_andTheConnectionIsNotReused(http2: Bool) async throws {
        let (error, received, connections) = try await breakThenFetch(how: "reset", http2: http2)
        #expect(error?.code == .networkConnectionLost)
        #expect(received <= 16384)
        #expect(connections == 2)
    }

    @Test(arguments: [false, true])
    func bytesThatAreNoRecordOfTheSession_failTheTask_andTheConnectionIsNotReused(http2: Bool) async throws {
        let (error, received, connections) = try await breakThenFetch(how: "garbage", http2: http2)
        #expect(error != nil)
        #expect([.networkConnectionLost, .secureConnectionFailed].contains(error?.code))
        #expect(error?.failingURL?.path == "/drop/65536")
        #expect(received <= 16384)
        #expect(connections == 2)
    }
}
