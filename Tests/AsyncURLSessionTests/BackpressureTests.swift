import AsyncURLSession
import Foundation
import LoopbackServer
import Testing

extension LoadSensitiveTests {
@Suite struct BackpressureTests {
    /// Generous: bodies are 256 MiB to 1 GiB; a bounded pipeline stays far
    /// below (the real figures are in the benchmarks).
    static let memoryBound = 200 * 1024 * 1024

    @Test func slowConsumerOfLargeBody_keepsMemoryBounded() async throws {
        try await withServer(timeLimit: 120) { server in
            // fetch reads `task.events` at 100 MB/s, slower than loopback: the
            // transfer must wait for it, not buffer the 256 MiB.
            let result = try await runBuiltProduct(
                "fetch", ["-s", "--limit-rate", "100000000", server.url("/bytes/\(256 << 20)").absoluteString])
            #expect(result.status == 0, "\(result.errorText)")
            #expect(result.peakResidentBytes < Self.memoryBound, "peak \(result.peakResidentBytes >> 20) MiB")
        }
    }

    @Test func oneGigabyteDownload_keepsMemoryBounded() async throws {
        try await withServer(timeLimit: 120) { server in
            let destination = FileManager.default.temporaryDirectory.appendingPathComponent("big-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: destination) }
            let result = try await runBuiltProduct(
                "fetch", ["-s", "-o", destination.path, server.url("/bytes/\(1 << 30)").absoluteString])
            #expect(result.status == 0, "\(result.errorText)")
            #expect(result.peakResidentBytes < Self.memoryBound, "peak \(result.peakResidentBytes >> 20) MiB")
            let size = try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? NSNumber
            #expect(size?.intValue == 1 << 30)
        }
    }

    @Test func oneGigabyteFileUpload_keepsMemoryBounded() async throws {
        try await withServer(timeLimit: 120) { server in
            let source = FileManager.default.temporaryDirectory.appendingPathComponent("upload-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: source) }
            // A sparse file: 1 GiB to read and send, no disk space used.
            _ = FileManager.default.createFile(atPath: source.path, contents: nil)
            let handle = try FileHandle(forWritingTo: source)
            try handle.truncate(atOffset: 1 << 30)
            try handle.close()
            let result = try await runBuiltProduct(
                "fetch", ["-s", "-T", source.path, server.url("/echo").absoluteString])
            #expect(result.status == 0, "\(result.errorText)")
            #expect(result.peakResidentBytes < Self.memoryBound, "peak \(result.peakResidentBytes >> 20) MiB")
        }
    }

    /// libcurl 7.88.1 has known stalls for paused HTTP/2 streams (curl #10988,
    /// #11005): a slow consumer over h2 must still get every byte.
    @Test func slowConsumerOverHTTP2_receivesTheWholeBody() async throws {
        try await withServer(LoopbackServer.Options(tls: true, http2: true), timeLimit: 90) { server in
            let size = 24 << 20
            var configuration = testConfiguration(trusting: server)
            configuration.streamBufferHighWatermark = 256 << 10
            configuration.streamBufferLowWatermark = 32 << 10
            let task = Session(configuration: configuration).dataTask(with: server.url("/bytes/\(size)"))
            task.resume()
            var received = 0
            var chunks = 0
            var matches = true
            for try await event in task.events {
                guard case .data(let chunk) = event else { continue }
                matches = matches && chunk == LoopbackServer.patternBody(count: chunk.count, offset: received)
                received += chunk.count
                chunks += 1
                // About 25 MB/s: well below what the server sends, so the stream pauses.
                if chunks % 8 == 0 { try await Task.sleep(for: .milliseconds(5)) }
            }
            #expect(received == size)
            #expect(matches)
            #expect(task.metrics?.transactionMetrics.last?.networkProtocolName == "h2")
        }
    }

    @Test func unconsumedTask_doesNotBlockOtherTasks() async throws {
        try await withServer { server in
            let session = Session(configuration: testConfiguration())
            let ignored = session.dataTask(with: server.url("/bytes/\(64 * 1024 * 1024)"))
            ignored.resume()
            // Nobody pulls `ignored`: it pauses at the watermark. Others go on.
            for _ in 0..<5 {
                let (data, _) = try await session.data(from: server.url("/bytes/1000"))
                #expect(data.count == 1000)
            }
            #expect(ignored.countOfBytesReceived < 64 * 1024 * 1024)
            ignored.cancel()
        }
    }
}
}
