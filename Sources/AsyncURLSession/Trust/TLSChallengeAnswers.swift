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

/// What a task's handlers answered to a client-certificate challenge.
enum TaskClientCertificateAnswer: Sendable {
    /// Present this identity (libcurl's blob options; part of libcurl's TLS
    /// configuration match, so its connections serve no other identity).
    case identity(ClientIdentity)
    /// Go on without a certificate (default handling, a rejected space).
    case withoutCertificate
}

/// A hop's TLS-challenge settings: the engine's check, the pin that selects
/// (and enforces) connections trusted by an answer, and the identity an
/// answer chose.
struct TLSChallengeHop: Sendable {
    var check: TLSChallengeCheck
    var pin: String?
    var identity: ClientIdentity?

    /// The settings for a connection to `host` (`key`: "host:port") under
    /// the answers given so far (a task's, or a WebSocket or stream
    /// connection's), else the session's remembered ones.
    static func under(
        _ trustAnswer: TaskTrustAnswer?, _ identityAnswer: TaskClientCertificateAnswer?, host: String, key: String,
        remembered: TLSChallengeAnswers
    ) -> TLSChallengeHop {
        let trust: TLSChallengeCheck.TrustMode
        let pin: String?
        switch trustAnswer {
        case .trusted(let leaf, let leafPin):
            (trust, pin) = (.acceptLeaf(leaf), leafPin)
        case .verified:
            (trust, pin) = (.acceptIfVerified, nil)
        case nil:
            // A chain the session trusted before: its connections first.
            (trust, pin) = (.ask, remembered.pin(for: key))
        }
        let identity: ClientIdentity?
        let asks: Bool
        switch identityAnswer {
        case .identity(let chosen): (identity, asks) = (chosen, false)
        case .withoutCertificate?: (identity, asks) = (nil, false)
        case nil: (identity, asks) = (remembered.identity(for: key), true)
        }
        let check = TLSChallengeCheck(
            host: host, trust: trust, overridesVerification: pin != nil, asksForClientCertificate: asks)
        return TLSChallengeHop(check: check, pin: pin, identity: identity)
    }
}

/// The session's remembered answers, per "host:port": a later task to that
/// host starts under them, so it reuses a connection they made (and is asked
/// only when a new connection is made).
final class TLSChallengeAnswers: Sendable {
    private struct Remembered {
        var pins: [String: String] = [:]
        var identities: [String: ClientIdentity] = [:]
    }

    private let remembered = Mutex(Remembered())

    func pin(for key: String) -> String? { remembered.withLock { $0.pins[key] } }
    func remember(pin: String, for key: String) { remembered.withLock { $0.pins[key] = pin } }
    func forgetPin(for key: String) { _ = remembered.withLock { $0.pins.removeValue(forKey: key) } }

    func identity(for key: String) -> ClientIdentity? { remembered.withLock { $0.identities[key] } }
    func remember(identity: ClientIdentity?, for key: String) { remembered.withLock { $0.identities[key] = identity } }

    /// "host:port", lowercased, the key of both stores.
    static func key(host: String, port: Int) -> String { "\(host.lowercased()):\(port)" }
}

/// A task's TLS-challenge and proxy answers (`TaskMachine.connection()`
/// makes it). A class made on first use, not fields of the task: 10,000
/// tasks in flight that never meet a challenge keep 8 bytes each instead of
/// about a hundred. Its fields change only through the transitions below.
final class TaskConnectionState: @unchecked Sendable {
    // @unchecked: created and touched only inside its task's `guarded` lock.
    /// A certificate failure being diagnosed: a second handshake records
    /// the chain to name what is wrong; this error stands if it cannot.
    private(set) var trustDiagnosis: URLError?
    /// What this task's handlers answered to server trust, per "host:port".
    private(set) var trustAnswers: [String: TaskTrustAnswer] = [:]
    /// What they answered to client-certificate challenges, per "host:port".
    private(set) var clientCertificateAnswers: [String: TaskClientCertificateAnswer] = [:]
    /// TLS challenges offered during this task.
    private(set) var tlsChallengeCount = 0
    /// The credential a handler gave for the session's proxy (a 407).
    private(set) var proxyCredential: HopCredential?

    /// A TLS challenge is offered; returns how many have been, this one included.
    func countChallenge() -> Int {
        tlsChallengeCount += 1
        return tlsChallengeCount
    }

    /// Starts diagnosing `error` with a second handshake, counted as a
    /// challenge; false (nothing changed) once any challenge was offered or
    /// a diagnosis runs: one diagnosis per task.
    func startDiagnosis(of error: URLError) -> Bool {
        guard trustDiagnosis == nil, tlsChallengeCount == 0 else { return false }
        trustDiagnosis = error
        tlsChallengeCount += 1
        return true
    }

    /// Ends the diagnosis: the error it started from, nil when none ran.
    func takeDiagnosis() -> URLError? {
        defer { trustDiagnosis = nil }
        return trustDiagnosis
    }

    func answered(trust answer: TaskTrustAnswer, for key: String) {
        trustAnswers[key] = answer
    }

    func answered(clientCertificate answer: TaskClientCertificateAnswer, for key: String) {
        clientCertificateAnswers[key] = answer
    }

    func answered(proxyCredential credential: HopCredential?) {
        proxyCredential = credential
    }
}
