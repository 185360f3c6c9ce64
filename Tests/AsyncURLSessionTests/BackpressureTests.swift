import AsyncURLSession
import Foundation
import LoopbackServer
import Testing

@Suite struct BackpressureTests {
    /// Resident memory of this process in bytes, from /proc/self/status.
    private func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kib = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
            return kib * 1024
        }
        return 0
    }

    @Test func slowConsumerOfLargeBody_keepsMemoryBounded() async throws {
        try await withServer(timeLimit: 120) { server in
            let size = 256 * 1024 * 1024
            let session = Session(configuration: testConfiguration())
            let baseline = residentBytes()
            let task = session.dataTask(with: server.url("/bytes/\(size)"))
            task.resume()
            var received = 0
            var peak = baseline
            var chunks = 0
            for try await event in task.events {
                guard case .data(let chunk) = event else { continue }
                received += chunk.count
                chunks += 1
                if chunks % 32 == 0 {
                    // A slow consumer (about 100 MB/s at most, slower than the
                    // loopback server): the transfer must wait for it, not buffer.
                    try await Task.sleep(for: .milliseconds(5))
                    peak = max(peak, residentBytes())
                }
            }
            #expect(received == size)
            // Generous: the body is 256 MiB; a bounded pipeline stays far below.
            #expect(peak - baseline < 200 * 1024 * 1024, "grew by \((peak - baseline) >> 20) MiB")
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
