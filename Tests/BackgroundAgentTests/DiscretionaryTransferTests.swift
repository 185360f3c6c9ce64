import AgentWire
import Foundation
import LoopbackServer
import Logging
import Testing
import TestSupport
@testable import BackgroundAgent

/// `isDiscretionary` lowers a transfer's priority: the agent starts it only
/// once no other transfer runs.
@Suite struct DiscretionaryTransferTests {
    @Test func aDiscretionaryTransfer_waitsForTheOthersToEnd() async throws {
        try await withServer(timeLimit: 60) { server in
            let folder = URL(fileURLWithPath: "/tmp").appendingPathComponent("discretion-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let agent = try TransferAgent(folder: folder, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
            let urgent = BackgroundRequest(method: "GET", url: server.url("/delay/800").absoluteString)
            let whenever = BackgroundRequest(
                method: "GET", url: server.url("/range/1000").absoluteString, discretionary: true)
            _ = await agent.handle(.startDownload(session: "s", task: 1, request: urgent, destination: nil))
            _ = await agent.handle(.startDownload(session: "s", task: 2, request: whenever, destination: nil))
            let early = try Self.phases(await agent.handle(.status))
            #expect(early[2] == "queued", "\(early)")
            // Bounded: the urgent one takes 0.8 s, then the other a moment.
            var phases = early
            for _ in 0..<Int(200 * testTimeScale) where phases[2] != "finished" {
                try await Task.sleep(nanoseconds: 50_000_000)
                phases = try Self.phases(await agent.handle(.status))
            }
            #expect(phases == [1: "finished", 2: "finished"], "\(phases)")
        }
    }

    private static func phases(_ reply: AgentReply) throws -> [Int: String] {
        guard case .status(_, let transfers) = reply else { throw AgentWireError("not a status: \(reply)") }
        return Dictionary(uniqueKeysWithValues: transfers.map { ($0.task, $0.phase) })
    }
}
