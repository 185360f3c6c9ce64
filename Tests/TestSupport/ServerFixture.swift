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


/// Runs `body` with an origin server and a `LoopbackProxy`, both on loopback,
/// and shuts both down.
public func withProxy(
    _ options: LoopbackServer.Options = LoopbackServer.Options(),
    requiring credentials: (user: String, password: String)? = nil,
    _ body: @escaping @Sendable (LoopbackServer, LoopbackProxy) async throws -> Void
) async throws {
    let proxy = try await LoopbackProxy.start(requiring: credentials)
    do {
        try await withServer(options) { server in try await body(server, proxy) }
        try await proxy.shutdown()
    } catch {
        try? await proxy.shutdown()
        throw error
    }
}
