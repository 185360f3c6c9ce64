import Foundation

/// One WebSocket client under test: `count` binary messages sent to an
/// echo route and received back, `window` of them in flight at a time.
protocol EchoClient: Sendable {
    /// Shown in the table.
    var name: String { get }
    /// Connects, then times the round trips only (not the handshake).
    func roundTrips(url: URL, message: Data, count: Int, window: Int) async throws -> Duration
}

struct EchoClientError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The loop every client runs: fill the window, then send one more for
/// each message that comes back, until `count` came back.
enum EchoLoop {
    static func run(
        message: Data, count: Int, window: Int,
        send: (Data) async throws -> Void, receive: () async throws -> Int
    ) async throws -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        var sent = 0
        var received = 0
        while sent < min(window, count) {
            try await send(message)
            sent += 1
        }
        while received < count {
            let size = try await receive()
            guard size == message.count else { throw EchoClientError("echoed \(size) bytes, sent \(message.count)") }
            received += 1
            if sent < count {
                try await send(message)
                sent += 1
            }
        }
        return clock.now - start
    }
}
