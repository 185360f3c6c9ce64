import Foundation
import LoopbackServer

/// Starts a loopback server for one test and always shuts it down.
@discardableResult
public func withServer<T: Sendable>(
    _ options: LoopbackServer.Options = LoopbackServer.Options(),
    timeLimit: Double = 30,
    _ body: @escaping @Sendable (LoopbackServer) async throws -> T
) async throws -> T {
    let server = try await LoopbackServer.start(options)
    do {
        let result = try await withTimeLimit(timeLimit) { try await body(server) }
        try await server.shutdown()
        return result
    } catch {
        try? await server.shutdown()
        throw error
    }
}

