import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

@testable import AsyncURLSession

/// The policies' steps carried out against a fake `PolicyHost`: no task,
/// no exchange, no network. Each test makes one step and reads what it
/// asked of its host (a decision offered, another hop, the end).
@Suite(.timeLimit(.minutes(1)))
struct PolicyStepTests {
    static let url = URL(string: "https://policy.test/a")!
    static let next = URL(string: "https://policy.test/b")!

    static func held(_ status: Int, _ fields: [String: String] = [:], kind: HopState.HeldKind) -> HopState.Held {
        HopState.Held(
            response: HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields)!,
            kind: kind)
    }

    /// Offers a 302 to `next` on `host`; the decision it offered.
    static func offerRedirect(on host: FakePolicyHost) -> RedirectDecision? {
        let proposed = URLRequest(url: next)
        RedirectFollowing.offer(
            held(302, kind: .redirect(proposed: proposed, isDowngrade: false)), proposed: proposed,
            isDowngrade: false, on: host)
        guard case .redirect(let decision)? = host.record.offered.first else { return nil }
        return decision
    }

    @Test func aRedirect_isOffered_andFollowingIt_startsTheNextHop() throws {
        let host = FakePolicyHost()
        let decision = try #require(Self.offerRedirect(on: host))
        decision.follow()
        #expect(host.record.startedHops == [Self.next])
        #expect(host.machine { $0.history.redirectCount } == 1)
        #expect(host.record.ends.isEmpty)
    }

    @Test func aRedirectStopped_makesThe3xxTheResult() throws {
        let host = FakePolicyHost()
        let decision = try #require(Self.offerRedirect(on: host))
        decision.stop()
        #expect(host.record.stoppedAt == [302])
        #expect(host.record.startedHops.isEmpty)
    }

    @Test func aRedirectPastTheLimit_endsWithTooManyRedirects_withoutAsking() {
        var configuration = SessionConfiguration.ephemeral
        configuration.httpMaximumRedirects = 0
        let host = FakePolicyHost(configuration: configuration)
        #expect(Self.offerRedirect(on: host) == nil)
        #expect(host.record.offered.isEmpty)
        #expect(host.record.ends.map { $0?.code } == [.httpTooManyRedirects])
    }

    @Test func a401_isOffered_andACredential_startsTheHopAgainWithIt() {
        let host = FakePolicyHost()
        AuthenticationChallenging.offer(
            Self.held(401, ["WWW-Authenticate": "Basic realm=\"r\""], kind: .challenge), on: host)
        guard case .challenge(let decision)? = host.record.offered.first else {
            Issue.record("no challenge offered")
            return
        }
        #expect(decision.previousFailureCount == 0)
        #expect(decision.protectionSpace.realm == "r")
        decision.useCredential(URLCredential(user: "u", password: "p", persistence: .none))
        #expect(host.record.startedHops == [Self.url])
        #expect(host.record.credentials == ["u"])
    }

    @Test func a401_afterTheLastAttempt_isTheResult() {
        let sent = HopCredential(
            credential: URLCredential(user: "u", password: "wrong", persistence: .none),
            method: NSURLAuthenticationMethodHTTPBasic)
        let host = FakePolicyHost(credential: sent)
        let held = Self.held(401, ["WWW-Authenticate": "Basic realm=\"r\""], kind: .challenge)
        for _ in 0..<AuthenticationChallenging.maximumAttempts {
            AuthenticationChallenging.offer(held, on: host)
        }
        // Each 401 after a credential was sent is a failure: the last one
        // is the result instead of another question.
        #expect(host.record.offered.count == AuthenticationChallenging.maximumAttempts - 1)
        #expect(host.record.stoppedAt == [401])
    }

    @Test func a401WithNoMethodWeSpeak_isTheResult() {
        let host = FakePolicyHost()
        AuthenticationChallenging.offer(
            Self.held(401, ["WWW-Authenticate": "Bearer realm=\"r\""], kind: .challenge), on: host)
        #expect(host.record.offered.isEmpty)
        #expect(host.record.stoppedAt == [401])
    }

    @Test func aRetryWithTheOriginsBudgetSpent_isNotMade() {
        let spent = RetryPolicy(budget: RetryBudget(ratio: 0, minimumRetries: 0))
        let host = FakePolicyHost(retry: spent)
        let attempt = RetryAttempt(attempt: 2, delay: 0, reason: .failure(URLError(.networkConnectionLost)))
        #expect(!RetryScheduling.retry(attempt, on: host))
        #expect(host.record.announced.isEmpty)
        #expect(host.machine { $0.retry?.attemptsMade } == 1)
    }

    @Test func aRetry_isAnnouncedFirst_thenTheHopStartsAgain() async throws {
        let host = FakePolicyHost(retry: RetryPolicy(budget: nil))
        let attempt = RetryAttempt(attempt: 2, delay: 0, reason: .failure(URLError(.networkConnectionLost)))
        #expect(RetryScheduling.retry(attempt, on: host))
        #expect(host.record.announced == ["retrying"])
        // The hop starts after the attempt's delay, on another thread.
        try await eventually { !host.record.startedHops.isEmpty }
        #expect(host.record.startedHops == [Self.url])
        #expect(host.machine { $0.retry?.attemptsMade } == 2)
    }

    @Test func aFailureThatIsNotAboutReachingTheServer_isNotWaitedOut() {
        var configuration = SessionConfiguration.ephemeral
        configuration.waitsForConnectivity = true
        let host = FakePolicyHost(configuration: configuration)
        #expect(!ConnectivityWaiting.wait(after: URLError(.badServerResponse), on: host))
        #expect(host.record.announced.isEmpty)
    }

    @Test func anUnreachableServer_isAnnouncedOnce_andWaitedOut() {
        var configuration = SessionConfiguration.ephemeral
        configuration.waitsForConnectivity = true
        configuration.timeoutIntervalForResource = 60
        let host = FakePolicyHost(configuration: configuration)
        #expect(ConnectivityWaiting.wait(after: URLError(.cannotConnectToHost), on: host))
        #expect(ConnectivityWaiting.wait(after: URLError(.cannotConnectToHost), on: host))
        #expect(host.record.announced == ["waitingForConnectivity"])
    }
}

/// A host that records what the steps ask of it. Its machine is a real
/// `TaskMachine` (resumed, with one hop for `PolicyStepTests.url`), so the
/// steps read and change it as they would a task's.
final class FakePolicyHost: PolicyHost {
    struct Record: Sendable {
        var offered: [TaskEvent] = []
        var announced: [String] = []
        var startedHops: [URL?] = []
        var credentials: [String?] = []
        var stoppedAt: [Int] = []
        var ends: [URLError?] = []
    }

    let identifier = 1
    let context: SessionContext
    let originalRequest = URLRequest(url: PolicyStepTests.url)
    let createdAt = Date()
    let upload = UploadSource.none
    let log: TaskLog? = nil
    let observation: TaskObservation? = nil
    var failingURLString: String? { originalRequest.url?.absoluteString }
    let offersTLSChallenges = false
    let hasHandlers = false
    var hasEnded: Bool { !recorded.withLock { $0.ends.isEmpty } }
    private let guarded: Mutex<TaskMachine>
    private let recorded = Mutex(Record())

    var record: Record { recorded.withLock { $0 } }

    init(configuration: SessionConfiguration = .ephemeral, credential: HopCredential? = nil, retry: RetryPolicy? = nil) {
        // A real session's context (its stores, its configuration); its
        // task is never resumed.
        context = Session(configuration: configuration).dataTask(with: PolicyStepTests.url).core.context
        var machine = TaskMachine(
            pipeline: TaskPipeline(highWatermark: 1 << 20, lowWatermark: 1 << 19),
            hop: HopState(request: URLRequest(url: PolicyStepTests.url), credential: credential),
            retry: retry.map(RetryState.init), isUploadTask: false, metricsReadByHandlers: false)
        _ = machine.pipeline.resume()
        guarded = Mutex(machine)
    }

    func machine<Result>(_ transition: (inout TaskMachine) -> sending Result) -> sending Result {
        guarded.withLock { transition(&$0) }
    }

    func resendNeedsBodyStream(_ request: URLRequest) -> Bool { false }

    func startHop(_ request: URLRequest, credential: HopCredential?) {
        recorded.withLock {
            $0.startedHops.append(request.url)
            $0.credentials.append(credential?.credential.user)
        }
    }

    func sendPrepared(_ request: URLRequest, credential: HopCredential?) {
        startHop(request, credential: credential)
    }

    func answerLocally(_ request: URLRequest, responder: any LocalResponder, credential: HopCredential?) {
        startHop(request, credential: credential)
    }

    func deliverInspected(_ source: ResponseSource, heldBody: Data?) {}

    func completeWithTransactions(error: URLError?) {
        recorded.withLock { $0.ends.append(error) }
    }

    func stopAtHeldResponse(_ held: HopState.Held) {
        recorded.withLock { $0.stoppedAt.append(held.response.statusCode) }
    }

    func offerDecision(
        _ event: TaskEvent, _ decision: any PendingDecision,
        ask: @escaping @Sendable (any SessionTaskDelegate, SessionTask) async -> Void
    ) {
        recorded.withLock { $0.offered.append(event) }
    }

    func announce(
        _ event: TaskEvent, consumerFirst: Bool,
        tell: @escaping @Sendable (any SessionTaskDelegate, SessionTask) async -> Void
    ) {
        let name = switch event {
        case .waitingForConnectivity: "waitingForConnectivity"
        case .retrying: "retrying"
        default: "other"
        }
        recorded.withLock { $0.announced.append(name) }
    }
}
