internal import CurlEngine
import Foundation
import Synchronization

/// What a task's handlers answered to a server-trust challenge for one
/// "host:port", applied to the task's later hops there.
enum TaskTrustAnswer: Sendable {
    /// `URLCredential(trust:)`: this leaf is accepted; its public-key pin
    /// keeps the connections made under the answer apart.
    case trusted(leafSHA256: Data, pin: String)
    /// Default handling: default verification decides.
    case verified
}

/// A hop's server-trust settings: the engine's check, and the pin that
/// selects (and enforces) connections trusted by an answer.
struct ServerTrustHop: Sendable {
    var check: ServerTrustCheck
    var pin: String?
}

/// The session's remembered trusting answers, per "host:port": a later task
/// to that host starts under the answer's pin, so it reuses a connection the
/// answer trusted (and is asked only when a new connection is made).
final class ServerTrustAnswers: Sendable {
    private let pins = Mutex<[String: String]>([:])

    func pin(for key: String) -> String? { pins.withLock { $0[key] } }
    func remember(_ pin: String, for key: String) { pins.withLock { $0[key] = pin } }
    func forget(_ key: String) { _ = pins.withLock { $0.removeValue(forKey: key) } }

    /// "host:port", lowercased, the key of both stores.
    static func key(host: String, port: Int) -> String { "\(host.lowercased()):\(port)" }
}
