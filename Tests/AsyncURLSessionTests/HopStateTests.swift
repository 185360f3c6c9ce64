import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@testable import AsyncURLSession

/// The hop's state on its own: which heads are held for a decision, where
/// body bytes go meanwhile, and what a held response becomes. No engine, no
/// network.
@Suite struct HopStateTests {
    private static let url = URL(string: "https://origin.test/start")!

    private static func response(_ status: Int, _ fields: [String: String] = [:]) -> ResponseSource {
        ResponseSource(HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields)!)
    }

    private static func hop(method: String = "GET", credential: Bool = false, proxyCredential: Bool = false) -> HopState {
        var request = URLRequest(url: url)
        request.httpMethod = method
        let answer = HopCredential(
            credential: URLCredential(user: "u", password: "p", persistence: .forSession),
            method: NSURLAuthenticationMethodHTTPBasic)
        return HopState(
            request: request, credential: credential ? answer : nil, proxyCredential: proxyCredential ? answer : nil)
    }

    enum Verdict: Equatable, Sendable {
        case deliver, redirect(to: String, method: String), challenge, provisional, retryable
    }

    static func verdict(of hop: inout HopState, _ source: ResponseSource) -> Verdict {
        switch hop.receivedHead(source, sensitive: { _ in false }) {
        case .deliver: return .deliver
        case .hold:
            switch hop.held?.kind {
            case .redirect(let proposed, _)?:
                return .redirect(to: proposed.url?.absoluteString ?? "-", method: proposed.httpMethod ?? "GET")
            case .challenge?: return .challenge
            case .provisionalAuthFailure?: return .provisional
            case .retryableStatus?: return .retryable
            case nil: return .deliver
            }
        }
    }

    struct HeadCase: CustomTestStringConvertible, Sendable {
        let name: String
        let method: String
        let credential: Bool
        let proxyCredential: Bool
        let status: Int
        let fields: [String: String]
        let expected: Verdict
        var testDescription: String { name }
    }

    static let headCases: [HeadCase] = [
        HeadCase(name: "200 is delivered", method: "GET", credential: false, proxyCredential: false,
                 status: 200, fields: [:], expected: .deliver),
        HeadCase(name: "302 with a Location is held as a redirect", method: "GET", credential: false,
                 proxyCredential: false, status: 302, fields: ["Location": "/next"],
                 expected: .redirect(to: "https://origin.test/next", method: "GET")),
        HeadCase(name: "303 turns POST into GET", method: "POST", credential: false, proxyCredential: false,
                 status: 303, fields: ["Location": "https://other.test/see"],
                 expected: .redirect(to: "https://other.test/see", method: "GET")),
        HeadCase(name: "307 keeps POST", method: "POST", credential: false, proxyCredential: false,
                 status: 307, fields: ["Location": "/again"],
                 expected: .redirect(to: "https://origin.test/again", method: "POST")),
        HeadCase(name: "302 without a Location is delivered", method: "GET", credential: false,
                 proxyCredential: false, status: 302, fields: [:], expected: .deliver),
        HeadCase(name: "a Location with another scheme is delivered, never followed", method: "GET",
                 credential: false, proxyCredential: false, status: 302, fields: ["Location": "file:///etc/passwd"],
                 expected: .deliver),
        HeadCase(name: "304 is not a redirect", method: "GET", credential: false, proxyCredential: false,
                 status: 304, fields: ["Location": "/x"], expected: .deliver),
        HeadCase(name: "401 with a challenge to a request without credentials is held", method: "GET",
                 credential: false, proxyCredential: false, status: 401,
                 fields: ["WWW-Authenticate": "Basic realm=\"r\""], expected: .challenge),
        HeadCase(name: "401 without a challenge is delivered", method: "GET", credential: false,
                 proxyCredential: false, status: 401, fields: [:], expected: .deliver),
        HeadCase(name: "401 to a request with credentials is provisional", method: "GET", credential: true,
                 proxyCredential: false, status: 401, fields: ["WWW-Authenticate": "Digest realm=\"r\""],
                 expected: .provisional),
        HeadCase(name: "407 with a proxy credential is provisional", method: "GET", credential: false,
                 proxyCredential: true, status: 407, fields: ["Proxy-Authenticate": "Basic realm=\"p\""],
                 expected: .provisional),
        HeadCase(name: "407 with a challenge and no proxy credential is held", method: "GET", credential: true,
                 proxyCredential: false, status: 407, fields: ["Proxy-Authenticate": "Basic realm=\"p\""],
                 expected: .challenge),
    ]

    @Test(arguments: headCases)
    func receivedHead(_ row: HeadCase) {
        var hop = Self.hop(method: row.method, credential: row.credential, proxyCredential: row.proxyCredential)
        #expect(Self.verdict(of: &hop, Self.response(row.status, row.fields)) == row.expected)
        #expect((hop.held == nil) == (row.expected == .deliver))
    }

    @Test func aRetryableStatus_isHeld_onlyWhenTheRetryPolicyAsks() {
        var hop = Self.hop()
        #expect(hop.receivedHead(Self.response(503), retryable: [503], sensitive: { _ in false }).isHold)
        #expect(hop.held.map { if case .retryableStatus = $0.kind { true } else { false } } == true)
        #expect(!hop.receivedHead(Self.response(503), sensitive: { _ in false }).isHold)
        #expect(hop.held == nil)
    }

    @Test func aNewHead_dropsWhatTheLastOneHeld() {
        var hop = Self.hop()
        _ = Self.verdict(of: &hop, Self.response(302, ["Location": "/next"]))
        #expect(hop.held != nil)
        #expect(Self.verdict(of: &hop, Self.response(200)) == .deliver)
        #expect(hop.held == nil)
    }

    @Test func bodyBytes_ofAnUnheldResponse_areDelivered() {
        var hop = Self.hop()
        _ = Self.verdict(of: &hop, Self.response(200))
        let verdict = [UInt8](repeating: 1, count: 10).withUnsafeBytes { hop.receivedBody($0) }
        guard case .deliver = verdict else {
            Issue.record("expected deliver, got \(verdict)")
            return
        }
    }

    @Test func bodyBytes_ofAHeldRedirect_areKeptWithIt() {
        var hop = Self.hop()
        _ = Self.verdict(of: &hop, Self.response(302, ["Location": "/next"]))
        for _ in 0..<3 {
            let verdict = [UInt8](repeating: 7, count: 100).withUnsafeBytes { hop.receivedBody($0) }
            guard case .kept = verdict else {
                Issue.record("expected kept, got \(verdict)")
                return
            }
        }
        #expect(hop.held?.body.count == 300)
    }

    @Test func aHeldBodyPastTheLimit_releasesTheHeldResponse_withWhatWasKept() {
        var hop = Self.hop()
        _ = Self.verdict(of: &hop, Self.response(302, ["Location": "/next"]))
        let kept = [UInt8](repeating: 1, count: HopState.heldBodyLimit - 10)
        _ = kept.withUnsafeBytes { hop.receivedBody($0) }
        let verdict = [UInt8](repeating: 2, count: 20).withUnsafeBytes { hop.receivedBody($0) }
        guard case .releaseHeld(let response, let body) = verdict else {
            Issue.record("expected releaseHeld, got \(verdict)")
            return
        }
        #expect(response.statusCode == 302)
        #expect(body.count == HopState.heldBodyLimit - 10)
        #expect(hop.held == nil)
    }

    @Test func aProvisionalAuthFailure_becomesAChallenge_whenLibcurlWritesItsBody() {
        var hop = Self.hop(credential: true)
        #expect(Self.verdict(of: &hop, Self.response(401, ["WWW-Authenticate": "Digest realm=\"r\""])) == .provisional)
        _ = [UInt8](repeating: 1, count: 5).withUnsafeBytes { hop.receivedBody($0) }
        guard case .challenge? = hop.held?.kind else {
            Issue.record("expected a challenge")
            return
        }
    }

    @Test func releaseHeld_leavesNothingHeld() {
        var hop = Self.hop()
        _ = Self.verdict(of: &hop, Self.response(401, ["WWW-Authenticate": "Basic realm=\"r\""]))
        hop.releaseHeld()
        #expect(hop.held == nil)
    }

    @Test func aProxyRefusingConnect_isHeldAsA407Challenge_withItsMethods() {
        var hop = Self.hop()
        hop.holdConnectRefusal(methods: ["Basic", "NTLM"], error: URLError(.cannotConnectToHost))
        #expect(hop.held?.response.statusCode == 407)
        #expect(hop.held?.response.value(forHTTPHeaderField: "Proxy-Authenticate") == "Basic, NTLM")
        #expect(hop.held?.connectFailure?.code == .cannotConnectToHost)
        guard case .challenge? = hop.held?.kind else {
            Issue.record("expected a challenge")
            return
        }
    }

    @Test func anExchangeThatEndedElsewhere_movesTheRequest() {
        var hop = Self.hop()
        hop.moved(to: URL(string: "https://elsewhere.test/end")!)
        #expect(hop.request.url?.absoluteString == "https://elsewhere.test/end")
    }

    @Test func onlyRedirectAndAuthStatuses_mayBeHeld() {
        #expect((301...308).filter { HopState.mayHold(status: $0) } == [301, 302, 303, 305, 306, 307, 308])
        #expect(HopState.mayHold(status: 401) && HopState.mayHold(status: 407))
        #expect(![200, 204, 304, 400, 403, 404, 500, 503].contains { HopState.mayHold(status: $0) })
    }
}

/// `cancelByProducingResumeData()` callers on their own.
@Suite struct ResumeDataRequestsTests {
    @Test func nobodyAsked_keepsNothing() {
        var requests = ResumeDataRequests()
        #expect(!requests.isWanted)
        #expect(requests.isEmpty)
        #expect(requests.takeWaiters().isEmpty)
    }

    @Test func everyCallerIsAnswered_once_andTheFileIsKept() async {
        let box = WaiterBox()
        async let first: Data? = withCheckedContinuation { box.add($0) }
        async let second: Data? = withCheckedContinuation { box.add($0) }
        await box.waitForCount(2)
        var requests = ResumeDataRequests()
        for waiter in box.take() { requests.ask(waiter) }
        #expect(requests.isWanted)
        #expect(!requests.isEmpty)
        let waiters = requests.takeWaiters()
        #expect(waiters.count == 2)
        #expect(requests.isEmpty)
        // Still wanted: the partial file stays for the resume data.
        #expect(requests.isWanted)
        #expect(requests.takeWaiters().isEmpty)
        for waiter in waiters { waiter.resume(returning: Data("resume".utf8)) }
        #expect(await first == Data("resume".utf8))
        #expect(await second == Data("resume".utf8))
    }
}

/// Collects continuations made by concurrent callers.
private final class WaiterBox: @unchecked Sendable {
    // @unchecked: `waiters` is only touched with `lock` held.
    private let lock = NSLock()
    private var waiters: [CheckedContinuation<Data?, Never>] = []

    func add(_ waiter: CheckedContinuation<Data?, Never>) {
        lock.withLock { waiters.append(waiter) }
    }

    func take() -> [CheckedContinuation<Data?, Never>] {
        lock.withLock {
            defer { waiters = [] }
            return waiters
        }
    }

    func waitForCount(_ count: Int) async {
        _ = try? await eventually(every: .milliseconds(1)) { lock.withLock { waiters.count } >= count }
    }
}

extension HopState.HeadVerdict {
    fileprivate var isHold: Bool {
        if case .hold = self { true } else { false }
    }
}
