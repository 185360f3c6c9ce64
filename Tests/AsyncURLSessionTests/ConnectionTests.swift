import AsyncURLSession
import Foundation
import LoopbackServer
import Testing

@Suite struct ConnectionTests {
    @Test func http1_sequentialRequests_reuseOneConnection() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            var reused: [Bool] = []
            for _ in 0..<3 {
                let task = session.dataTask(with: server.url("/bytes/1000"))
                task.resume()
                let recorded = await record(task)
                #expect(recorded.error == nil)
                reused.append(recorded.metrics?.transactionMetrics.last?.isReusedConnection ?? false)
                #expect(recorded.metrics?.transactionMetrics.last?.networkProtocolName == "http/1.1")
            }
            #expect(reused == [false, true, true])
            #expect(server.acceptedConnections == 1)
        }
    }

    /// The server closes a pooled connection while it is idle (its
    /// keep-alive timeout): the next request opens a new one and succeeds.
    @Test func idleConnectionClosedByTheServer_nextRequestReconnects() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let (first, _) = try await session.data(from: server.url("/close-idle/50"))
            #expect(first == Data("ok".utf8))
            // Waits for the server's close, however late a loaded machine runs
            // its 50 ms timer (a fixed nap could let the next request reuse it).
            try #require(try await eventually { server.openConnections == 0 })
            let task = session.dataTask(with: server.url("/bytes/1000"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            #expect(recorded.body == LoopbackServer.patternBody(count: 1000))
            #expect(recorded.metrics?.transactionMetrics.last?.isReusedConnection == false)
            #expect(server.acceptedConnections == 2)
        }
    }

    @Test func twoHundredConcurrentTasks_allComplete() async throws {
        try await withServer(timeLimit: 60) { server in
            let session = Session(configuration: testConfiguration())
            let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let (data, response) = try await session.data(from: server.url("/bytes/\(1000 + index)"))
                        #expect((response as? HTTPURLResponse)?.statusCode == 200)
                        #expect(data == LoopbackServer.patternBody(count: 1000 + index))
                        return data.count
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(sizes.count == 200)
            #expect(server.acceptedConnections <= session.configuration.httpMaximumConnectionsPerHost)
        }
    }

    @Test(arguments: [1, 16])
    func manySequentialWaves_reuseConnectionsWithinTheLimit(concurrency: Int) async throws {
        try await withServer(timeLimit: 60) { server in
            var configuration = testConfiguration()
            configuration.httpMaximumConnectionsPerHost = concurrency
            let session = Session(configuration: configuration)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<concurrency {
                    group.addTask {
                        for _ in 0..<(1000 / concurrency) {
                            _ = try await session.data(from: server.url("/bytes/1024"))
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(server.acceptedConnections <= concurrency, "opened \(server.acceptedConnections) connections")
        }
    }

    /// Below `TransferPlacement.http2SpillThreshold` (16) in flight, as an
    /// app's usual traffic is: one connection, as URLSession.
    @Test func https_negotiatesHTTP2_andMultiplexesOnOneConnection() async throws {
        try await withServer(LoopbackServer.Options(tls: true, http2: true)) { server in
            let session = Session(configuration: testConfiguration(trusting: server))
            let protocols = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<12 {
                    group.addTask {
                        let task = session.dataTask(with: server.url("/bytes/20000"))
                        task.resume()
                        let recorded = await record(task)
                        if let error = recorded.error { throw error }
                        #expect(recorded.body == LoopbackServer.patternBody(count: 20000))
                        return recorded.metrics?.transactionMetrics.last?.networkProtocolName
                    }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(protocols.allSatisfy { $0 == "h2" })
            #expect(server.acceptedConnections == 1)
        }
    }

    /// Many at once: one multiplexed connection per I/O thread at most, so
    /// that every I/O thread serves a busy origin.
    @Test func https_manyConcurrentRequests_multiplexOnAtMostOneConnectionPerIOThread() async throws {
        try await withServer(LoopbackServer.Options(tls: true, http2: true), timeLimit: 60) { server in
            let session = Session(configuration: testConfiguration(trusting: server))
            let protocols = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<64 {
                    group.addTask {
                        // Slow enough that all 64 are in flight together.
                        let task = session.dataTask(with: server.url("/delay/300"))
                        task.resume()
                        let recorded = await record(task)
                        if let error = recorded.error { throw error }
                        #expect(recorded.response?.statusCode == 200)
                        return recorded.metrics?.transactionMetrics.last?.networkProtocolName
                    }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(protocols.allSatisfy { $0 == "h2" })
            // 64 in flight pass the spill threshold (16): every I/O thread
            // takes some, on its own connection.
            #expect(server.acceptedConnections == Session.ioThreadCount)
        }
    }

    /// Easy handles are recycled between transfers. Over h2 libcurl 7.88.1
    /// keeps a finished transfer's receive buffer, and then refuses
    /// CURLOPT_BUFFERSIZE on that handle with 43: that must not fail the next
    /// task (it failed all but the first wave of W5 in the benchmarks).
    @Test func http2_wavesOnRecycledHandles_allSucceed() async throws {
        try await withServer(LoopbackServer.Options(tls: true, http2: true), timeLimit: 60) { server in
            let session = Session(configuration: testConfiguration(trusting: server))
            for _ in 0..<3 {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<8 {
                        group.addTask {
                            let (data, response) = try await session.data(from: server.url("/bytes/1024"))
                            #expect((response as? HTTPURLResponse)?.statusCode == 200)
                            #expect(data == LoopbackServer.patternBody(count: 1024))
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }

    @Test func https_withoutHTTP2_usesHTTP1() async throws {
        try await withServer(LoopbackServer.Options(tls: true, http2: false)) { server in
            let session = Session(configuration: testConfiguration(trusting: server))
            let task = session.dataTask(with: server.url("/bytes/1000"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            #expect(recorded.metrics?.transactionMetrics.last?.networkProtocolName == "http/1.1")
            #expect(recorded.metrics?.transactionMetrics.last?.secureConnectionEndDate != nil)
        }
    }
}
