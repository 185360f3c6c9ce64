import AsyncURLSession
import Foundation
import LoopbackServer
import Testing

extension LoadSensitiveTests {
@Suite struct TimeoutTests {
    @Test func idleTimeout_withoutResponse_failsWithTimedOut() async throws {
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.timeoutIntervalForRequest = 1
            let session = Session(configuration: configuration)
            let started = Date()
            await #expect(throws: URLError.self) {
                do {
                    _ = try await session.data(from: server.url("/stall-headers"))
                } catch {
                    #expect(error.urlErrorCode == .timedOut)
                    throw error
                }
            }
            #expect(Date().timeIntervalSince(started) >= 0.9)
        }
    }

    @Test func idleTimeout_midBody_failsWithTimedOut() async throws {
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.timeoutIntervalForRequest = 1
            let session = Session(configuration: configuration)
            let task = session.dataTask(with: server.url("/stall/10000?after=100"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.response?.statusCode == 200)
            #expect(recorded.body.count == 100)
            #expect(recorded.error?.urlErrorCode == .timedOut)
        }
    }

    @Test func resourceTimeout_whileBytesStillFlow_failsWithTimedOut() async throws {
        try await withServer { server in
            var configuration = testConfiguration()
            configuration.timeoutIntervalForRequest = 10
            configuration.timeoutIntervalForResource = 1
            let session = Session(configuration: configuration)
            let task = session.dataTask(with: server.url("/drip/100000?chunk=10&interval=50"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error?.urlErrorCode == .timedOut)
            #expect(!recorded.body.isEmpty, "bytes were flowing, so only the resource timeout can fire")
        }
    }

    @Test func requestTimeoutInterval_overridesConfiguration() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            var request = URLRequest(url: server.url("/stall-headers"))
            request.timeoutInterval = 1
            await #expect(throws: URLError.self) { _ = try await session.data(for: request) }
        }
    }
}
}
