import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Scripted responses for tests of code that uses `Session` (or the classic
/// `URLSession` of URLSessionCompat): set it as a configuration's
/// `localTransport`, and the session's requests are answered by its stubs
/// instead of the network. Tasks run the same pipeline as over the network
/// (events, redirect and challenge decisions, backpressure, progress,
/// metrics, downloads and resume data, cancellation, timeouts).
///
///     let stubs = StubTransport()
///     stubs.stub(.url("https://api.example.com/user"), with: .json(User(name: "Ada")))
///     var configuration = SessionConfiguration.ephemeral
///     configuration.localTransport = stubs
///     let session = Session(configuration: configuration)
///
/// Each transport is its own: nothing is global, so tests that run in
/// parallel, each with a transport of its own, never see each other's stubs.
/// The newest matching stub answers. A request no stub matches fails with
/// `URLError(.unsupportedURL)` naming the request and the stubs there are
/// (or, with `unmatched: .network`, goes to the network).
public final class StubTransport: LocalTransport, Sendable {
    /// What happens to a request no stub matches.
    public enum Unmatched: Sendable {
        /// It fails with `URLError(.unsupportedURL)` that lists the stubs.
        case fail
        /// It goes to the network.
        case network
    }

    enum Answer: Sendable {
        case fixed(StubResponse)
        case sequence([StubResponse])
        case handler(@Sendable (StubbedRequest) async throws -> StubResponse)
    }

    private struct Entry: Sendable {
        let matcher: RequestMatcher
        let answer: Answer
        /// Requests it still answers (nil: any number).
        var remaining: Int?
        /// Requests it answered (for `.sequence`).
        var answered = 0
    }

    private struct State: Sendable {
        var entries: [Entry] = []
        var requests: [StubbedRequest] = []
        var unmatchedRequests: [StubbedRequest] = []
    }

    private let state = Mutex(State())
    private let unmatched: Unmatched

    public init(unmatched: Unmatched = .fail) {
        self.unmatched = unmatched
    }

    // MARK: Adding stubs

    /// Answers requests `matcher` accepts with `response` (`times` of them, or any number).
    @discardableResult
    public func stub(_ matcher: RequestMatcher, times: Int? = nil, with response: StubResponse) -> StubTransport {
        add(matcher, .fixed(response), times: times)
    }

    /// Answers each request `matcher` accepts with the next of `responses`;
    /// the last one answers every later request (e.g. a 401, then a 200).
    @discardableResult
    public func stub(_ matcher: RequestMatcher, sequence responses: [StubResponse]) -> StubTransport {
        precondition(!responses.isEmpty, "a sequence needs at least one response")
        return add(matcher, .sequence(responses), times: nil)
    }

    /// Answers requests `matcher` accepts with what `handler` makes of
    /// each (its body already read). A `URLError` it throws fails the request.
    @discardableResult
    public func stub(
        _ matcher: RequestMatcher, times: Int? = nil,
        _ handler: @escaping @Sendable (StubbedRequest) async throws -> StubResponse
    ) -> StubTransport {
        add(matcher, .handler(handler), times: times)
    }

    /// Forgets every stub (the recorded requests stay).
    public func removeAllStubs() {
        state.withLock { $0.entries.removeAll() }
    }

    private func add(_ matcher: RequestMatcher, _ answer: Answer, times: Int?) -> StubTransport {
        precondition(times.map { $0 > 0 } ?? true, "times must be positive")
        state.withLock { $0.entries.append(Entry(matcher: matcher, answer: answer, remaining: times)) }
        return self
    }

    // MARK: What happened

    /// Every request a stub answered, in the order their bodies were read.
    public var requests: [StubbedRequest] { state.withLock { $0.requests } }

    /// Requests no stub matched.
    public var unmatchedRequests: [StubbedRequest] { state.withLock { $0.unmatchedRequests } }

    func record(_ request: StubbedRequest, matched: Bool) {
        state.withLock { state in
            if matched {
                state.requests.append(request)
            } else {
                state.unmatchedRequests.append(request)
            }
        }
    }

    // MARK: LocalTransport

    public func responder(for request: LocalRequest) -> (any LocalResponder)? {
        guard let url = request.url else { return nil }
        let method = request.httpMethod
        let found = state.withLock { state -> (Answer, Int)? in
            guard let index = state.entries.lastIndex(where: { $0.matcher.matches(method: method, url: url) }) else {
                return nil
            }
            let answered = state.entries[index].answered
            state.entries[index].answered += 1
            let answer = state.entries[index].answer
            if let remaining = state.entries[index].remaining {
                if remaining <= 1 {
                    state.entries.remove(at: index)
                } else {
                    state.entries[index].remaining = remaining - 1
                }
            }
            return (answer, answered)
        }
        if let (answer, answered) = found {
            let response: StubResponder.Source
            switch answer {
            case .fixed(let fixed): response = .fixed(fixed)
            case .sequence(let responses): response = .fixed(responses[min(answered, responses.count - 1)])
            case .handler(let handler): response = .handler(handler)
            }
            return StubResponder(transport: self, source: response)
        }
        switch unmatched {
        case .network:
            return nil
        case .fail:
            return StubResponder(transport: self, source: .unmatched(stubList()))
        }
    }

    /// The stubs there are, newest first, for the unmatched request's error.
    private func stubList() -> String {
        let entries = state.withLock { $0.entries }
        guard !entries.isEmpty else { return "There are no stubs." }
        return "Stubs, newest first: "
            + entries.reversed().map { entry in
                entry.matcher.description + (entry.remaining.map { " (\($0) left)" } ?? "")
            }.joined(separator: "; ") + "."
    }
}
