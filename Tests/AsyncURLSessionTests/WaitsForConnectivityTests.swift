import AsyncURLSession
import Foundation
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Testing

/// `waitsForConnectivity`: a task that cannot reach its server waits and
/// retries until the resource timeout instead of failing at once.
@Suite struct WaitsForConnectivityTests {
    /// A port nothing listens on, held so that no other test's server
    /// takes it (see `PortReservation`).
    private func freePort() throws -> PortReservation { try PortReservation() }

    private func configuration(resourceTimeout: Double = 60) -> SessionConfiguration {
        var configuration = testConfiguration()
        configuration.waitsForConnectivity = true
        configuration.timeoutIntervalForResource = scaledTimeout(resourceTimeout)
        return configuration
    }

    @Test func serverComingUpLater_isReached_afterOneWaitingEvent() async throws {
        try await withTimeLimit {
            let reservation = try PortReservation(forALateServer: true)
            let port = reservation.port
            let task = Session(configuration: configuration())
                .dataTask(with: URL(string: "http://127.0.0.1:\(port)/bytes/5")!)
            task.resume()
            let recording = Task { await record(task) }
            try await Task.sleep(for: .milliseconds(600))
            // Awaited first: a server that cannot start fails the test now.
            // It binds beside the reservation, which is let go after.
            let server = try await LoopbackServer.start(LoopbackServer.Options(port: port))
            reservation.release()
            let recorded = await recording.value
            try await server.shutdown()
            #expect(recorded.error == nil)
            #expect(recorded.kinds.filter { $0 == "waitingForConnectivity" }.count == 1)
            #expect(recorded.kinds.first == "waitingForConnectivity")
            #expect(recorded.body.count == 5)
        }
    }

    @Test func nobodyEverListening_failsAsTimedOut_atTheResourceTimeout() async throws {
        try await withTimeLimit {
            let reservation = try freePort()
            defer { reservation.release() }
            let port = reservation.port
            let started = ContinuousClock.now
            let session = Session(configuration: configuration(resourceTimeout: 1.5))
            let error = await #expect(throws: URLError.self) {
                _ = try await session.data(from: URL(string: "http://127.0.0.1:\(port)/")!)
            }
            #expect(error?.code == .timedOut)
            #expect(
                error?.localizedDescription.contains("Waited for connectivity") == true,
                "\(String(describing: error?.localizedDescription))")
            #expect(ContinuousClock.now - started >= .seconds(1))
        }
    }

    /// A connect that hangs (SYNs dropped) until libcurl's own limit ends
    /// the hop at the resource timeout: still the waiting's end, told as such.
    /// (A stalled machine once made the last retry end this way in CI.)
    @Test func aConnectHangingUntilTheResourceTimeout_failsSayingItWaited() async throws {
        try await withTimeLimit {
            let listener = try FullBacklogListener()
            defer { listener.close() }
            let session = Session(configuration: configuration(resourceTimeout: 1.5))
            let error = await #expect(throws: URLError.self) {
                _ = try await session.data(from: URL(string: "http://127.0.0.1:\(listener.port)/")!)
            }
            #expect(error?.code == .timedOut)
            #expect(
                error?.localizedDescription.contains("Waited for connectivity") == true,
                "\(String(describing: error?.localizedDescription))")
        }
    }

    @Test func offByDefault_failsAtOnce() async throws {
        try await withTimeLimit {
            let reservation = try freePort()
            defer { reservation.release() }
            let port = reservation.port
            let error = await #expect(throws: URLError.self) {
                _ = try await Session(configuration: testConfiguration()).data(from: URL(string: "http://127.0.0.1:\(port)/")!)
            }
            #expect(error?.code == .cannotConnectToHost)
        }
    }

    @Test func cancellingAWaitingTask_endsIt() async throws {
        try await withTimeLimit {
            let reservation = try freePort()
            defer { reservation.release() }
            let port = reservation.port
            let task = Session(configuration: configuration()).dataTask(with: URL(string: "http://127.0.0.1:\(port)/")!)
            task.resume()
            var error: URLError?
            do {
                for try await event in task.events {
                    if case .waitingForConnectivity = event { task.cancel() }
                }
            } catch let failure as URLError {
                error = failure
            }
            #expect(error?.code == .cancelled)
        }
    }

    /// A cancel can reach a retry's transfer after the engine let it go
    /// (connection refused) but before the task heard of it; the task must
    /// still end, cancelled, not schedule another retry that never starts.
    /// Many tasks, cancelled at moments spread around their first retry
    /// (0.25 s after the first refusal), where the window is.
    @Test func cancellingAtAnyMomentOfTheRetries_endsEveryTask() async throws {
        try await withTimeLimit {
            let reservation = try freePort()
            defer { reservation.release() }
            let url = URL(string: "http://127.0.0.1:\(reservation.port)/")!
            let session = Session(configuration: configuration())
            let codes = await withTaskGroup(of: URLError.Code?.self) { group in
                for index in 0..<64 {
                    group.addTask {
                        let task = session.dataTask(with: url)
                        task.resume()
                        let cancelling = Task {
                            try? await Task.sleep(for: .microseconds(246_000 + index * 250))
                            task.cancel()
                        }
                        defer { cancelling.cancel() }
                        do {
                            for try await _ in task.events {}
                            return nil
                        } catch {
                            return (error as? URLError)?.code
                        }
                    }
                }
                var codes: [URLError.Code?] = []
                for await code in group { codes.append(code) }
                return codes
            }
            #expect(codes.count == 64)
            #expect(codes.allSatisfy { $0 == .cancelled })
        }
    }

    @Test func serverErrors_areNotRetried() async throws {
        try await withServer { server in
            let (_, response) = try await Session(configuration: configuration()).data(from: server.url("/status/503"))
            #expect((response as? HTTPURLResponse)?.statusCode == 503)
        }
    }
}

/// A loopback listener that never accepts, its queue filled, so that a
/// further connect hangs: Linux drops the SYNs of a full accept queue.
private final class FullBacklogListener: Sendable {
    let port: Int
    private let descriptors: [Int32]

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 0) == 0
                    && getsockname(listener, pointer, &length) == 0
            }
        }
        guard listener >= 0, bound else { throw POSIXError(.EADDRNOTAVAIL) }
        let port = Int(UInt16(bigEndian: address.sin_port))
        var descriptors = [listener]
        // Non-blocking connects until the queue is full (two do with backlog 0).
        for _ in 0..<3 {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            var target = address
            _ = withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            descriptors.append(client)
        }
        usleep(100_000)
        self.port = port
        self.descriptors = descriptors
    }

    func close() { descriptors.forEach { Glibc.close($0) } }
}
