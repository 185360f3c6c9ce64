import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing
import TestSupport

@testable import AsyncURLSession

/// The task as a driver, without a network: a fake `HopExchange` stands in
/// for the engine, the test makes the hop's calls (head, body, trailers,
/// end, failure) and reads what the consumer gets, and what the task asked
/// of the exchange (suspend, resume, cancel, resume receiving).
@Suite struct TaskDriverTests {
    @Test func headBodyAndEnd_reachTheConsumerInOrder() async throws {
        try await withTimeLimit(30) {
            let hop = try await FakeHop.start()
            hop.head(200, ["Content-Length": "5"])
            #expect(hop.body("hello") == "accepted")
            hop.end()
            #expect(try await hop.events() == ["response 200", "data 5", "metrics", "end"])
            #expect(hop.task.state == .completed)
        }
    }

    @Test func trailers_comeAfterTheBody() async throws {
        try await withTimeLimit(30) {
            let hop = try await FakeHop.start()
            hop.head(200)
            _ = hop.body("abc")
            hop.end(trailers: [("X-Checksum", "1234")])
            #expect(try await hop.events() == ["response 200", "data 3", "trailers X-Checksum", "metrics", "end"])
        }
    }

    @Test func aFailure_endsTheEventsWithItsError() async throws {
        try await withTimeLimit(30) {
            let hop = try await FakeHop.start()
            hop.head(200)
            _ = hop.body("par")
            hop.end(error: URLError(.networkConnectionLost))
            #expect(try await hop.events() == ["response 200", "data 3", "metrics", "error -1005"])
        }
    }

    enum Step: String, CaseIterable, Sendable { case beforeHead, afterHead, midBody }

    @Test(arguments: Step.allCases)
    func cancel_stopsTheExchange_andEndsCancelled(at step: Step) async throws {
        try await withTimeLimit(30) {
            let hop = try await FakeHop.start()
            if step != .beforeHead { hop.head(200) }
            if step == .midBody { _ = hop.body("part") }
            hop.task.cancel()
            // The engine reports the stopped transfer; the fake does too.
            #expect(hop.exchange.calls.contains("cancel -999"))
            let events = try await hop.events()
            #expect(events.last == "error -999")
            #expect(hop.task.state == .completed)
        }
    }

    @Test func suspendAndResume_reachTheExchange() async throws {
        try await withTimeLimit(30) {
            let hop = try await FakeHop.start()
            hop.task.suspend()
            #expect(hop.task.state == .suspended)
            hop.task.resume()
            #expect(hop.exchange.calls == ["suspend", "resume"])
            hop.head(204)
            hop.end()
            #expect(try await hop.events() == ["response 204", "metrics", "end"])
        }
    }

    @Test func aLateCallbackOfAnOldHop_isIgnored() async throws {
        try await withTimeLimit(30) {
            let hop = try await FakeHop.start()
            let old = HopID.local()
            hop.task.hopDidReceiveHead(FakeHop.responseHead(500), id: old)
            let verdict = Data("stale".utf8).withUnsafeBytes { hop.task.hopDidReceiveBody($0, id: old) }
            guard case .abort = verdict else {
                Issue.record("an old hop's body was not refused: \(verdict)")
                return
            }
            hop.task.hopDidComplete(TransferOutcome(error: URLError(.timedOut), metrics: .empty(fetchStart: Date())), id: old)
            hop.head(200)
            _ = hop.body("fresh")
            hop.end()
            #expect(try await hop.events() == ["response 200", "data 5", "metrics", "end"])
        }
    }

    @Test func aRedirectTheConsumerStops_makesThe3xxTheResult() async throws {
        try await withTimeLimit(30) {
            let hop = try await FakeHop.start()
            hop.head(302, ["Location": "/elsewhere"])
            #expect(hop.body("moved") == "accepted")
            hop.end()
            #expect(try await hop.events(answering: { event in
                if case .redirect(let decision) = event { decision.stop() }
            }) == ["redirect /elsewhere", "response 302", "data 5", "metrics", "end"])
        }
    }

    @Test func a401NobodyCanAnswer_isTheResult() async throws {
        try await withTimeLimit(30) {
            let hop = try await FakeHop.start()
            hop.head(401, ["WWW-Authenticate": "Basic realm=\"fake\""])
            _ = hop.body("denied")
            hop.end()
            #expect(try await hop.events(answering: { event in
                if case .challenge(let decision) = event { decision.performDefaultHandling() }
            }) == ["challenge Basic", "response 401", "data 6", "metrics", "end"])
        }
    }

    @Test func aConsumerBehind_pausesTheHop_andResumesItOnceDrained() async throws {
        try await withTimeLimit(30) {
            let hop = try await FakeHop.start()
            hop.head(200)
            let chunk = String(repeating: "x", count: 64 << 10)
            var verdicts: [String] = []
            for _ in 0..<64 {
                let verdict = hop.body(chunk)
                verdicts.append(verdict)
                if verdict == "pause" { break }
            }
            #expect(verdicts.last == "pause")
            #expect(!hop.exchange.calls.contains("resumeReceiving"))
            // The consumer catches up: the hop may send again.
            var pulled = 0
            while !hop.exchange.calls.contains("resumeReceiving"), pulled < 100 {
                _ = try await hop.task.nextEvent()
                pulled += 1
            }
            #expect(hop.exchange.calls.contains("resumeReceiving"))
            hop.task.cancel()
        }
    }
}

/// One task of a real session whose hop is answered by the test.
private struct FakeHop: Sendable {
    let task: TaskCore
    let owner: SessionTask
    let exchange: FakeExchange

    static let url = URL(string: "https://driver.test/resource")!

    static func start() async throws -> FakeHop {
        let session = Session(configuration: .ephemeral)
        let owner = session.dataTask(with: url)
        let task = owner.core
        let exchange = FakeExchange(task: task)
        // Resumed as `resume()` would, but the hop is begun by the test
        // with its fake exchange instead of the engine or a responder.
        _ = task.guarded.withLock { $0.pipeline.resume() }
        let suspended = task.beginHop(HopState(request: URLRequest(url: url), credential: nil), via: exchange)
        #expect(suspended == false)
        return FakeHop(task: task, owner: owner, exchange: exchange)
    }

    static func responseHead(_ status: Int, _ fields: [String: String] = [:]) -> ResponseHead {
        ResponseHead(
            statusCode: status, httpVersion: "HTTP/1.1",
            fields: ResponseHeaderFields(fields.map { (name: $0.key, value: $0.value) }))
    }

    func head(_ status: Int, _ fields: [String: String] = [:]) {
        task.hopDidReceiveHead(Self.responseHead(status, fields), id: exchange.id)
    }

    func body(_ text: String) -> String {
        let verdict = Data(text.utf8).withUnsafeBytes { task.hopDidReceiveBody($0, id: exchange.id) }
        switch verdict {
        case .accepted: return "accepted"
        case .pause: return "pause"
        case .abort(let error): return "abort \(error.code.rawValue)"
        }
    }

    func end(error: URLError? = nil, trailers: [(String, String)]? = nil) {
        var outcome = TransferOutcome(error: error, metrics: .empty(fetchStart: Date()))
        outcome.trailers = trailers.map { ResponseHeaderFields($0.map { (name: $0.0, value: $0.1) }) }
        task.hopDidComplete(outcome, id: exchange.id)
    }

    /// Every event until the end, named; decisions answered by `answering`.
    func events(answering: @Sendable (TaskEvent) -> Void = { _ in }) async throws -> [String] {
        var names: [String] = []
        do {
            while let event = try await task.nextEvent() {
                answering(event)
                names.append(Self.name(event))
            }
            names.append("end")
        } catch let error as URLError {
            names.append("error \(error.code.rawValue)")
        }
        return names
    }

    static func name(_ event: TaskEvent) -> String {
        switch event {
        case .response(let response, _): "response \(response.statusCode)"
        case .data(let data): "data \(data.count)"
        case .trailers(let trailers): "trailers \(trailers.fields.map(\.name).joined(separator: ","))"
        case .metrics: "metrics"
        case .redirect(let decision): "redirect \(decision.proposedRequest.url?.path ?? "-")"
        case .challenge(let decision): "challenge \(decision.protectionSpace.authenticationMethod == NSURLAuthenticationMethodHTTPBasic ? "Basic" : "other")"
        default: "other"
        }
    }
}

/// Stands in for the engine: records what the task asks; a cancel ends the
/// hop with that error, as the engine reports a stopped transfer.
private final class FakeExchange: HopExchange {
    let id = HopID.local()
    let fetchType = TransactionMetrics.FetchType.networkLoad
    private let log = Mutex<[String]>([])
    private weak let task: TaskCore?

    init(task: TaskCore) {
        self.task = task
    }

    var calls: [String] { log.withLock { $0 } }
    private func note(_ call: String) { log.withLock { $0.append(call) } }

    func suspend() { note("suspend") }
    func resume() { note("resume") }
    func resumeReceiving() { note("resumeReceiving") }
    func cancel(error: URLError) {
        note("cancel \(error.code.rawValue)")
        task?.hopDidComplete(TransferOutcome(error: error, metrics: .empty(fetchStart: Date())), id: id)
    }
    func waitInline(until isDone: () -> Bool) {}
    func reportSent(_ sent: Int64, expected: Int64) {}
}
