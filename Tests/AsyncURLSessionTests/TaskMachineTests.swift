import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

@testable import AsyncURLSession

/// `TaskMachine` as a table, without a task or a network: each row puts a
/// machine in a state (resumed, one hop begun through a fake exchange),
/// makes one input and reads what the machine returns to its driver.
@Suite struct TaskMachineTests {
    static let url = URL(string: "https://machine.test/resource")!

    /// Runs `body` on a machine that was resumed and began one hop.
    static func withRunningMachine<T>(
        collect: Bool = false, retry: RetryPolicy? = nil, readByHandlers: Bool = false,
        _ body: (inout TaskMachine, HopID) -> T
    ) -> T {
        var machine = TaskMachine(
            pipeline: TaskPipeline(highWatermark: 1 << 20, lowWatermark: 1 << 19),
            hop: HopState(request: URLRequest(url: url), credential: nil),
            retry: retry.map(RetryState.init), isUploadTask: false, metricsReadByHandlers: readByHandlers)
        if collect { _ = machine.resumeCollecting(limit: 1 << 20) } else { _ = machine.pipeline.resume() }
        let exchange = MachineExchange()
        #expect(machine.beginHopIfWanted(HopState(request: URLRequest(url: url), credential: nil), via: exchange, expectedToSend: 0) == false)
        return body(&machine, exchange.id)
    }

    static func head(_ status: Int) -> ResponseHead {
        ResponseHead(statusCode: status, httpVersion: "HTTP/1.1", fields: ResponseHeaderFields([]))
    }

    static func outcome(_ error: URLError? = nil) -> TransferOutcome {
        TransferOutcome(error: error, metrics: .empty(fetchStart: Date()))
    }

    /// A 200 of hop `id`, decided at once (a 200 is never held) and
    /// published; false (recorded) if it was not.
    static func published200(_ machine: inout TaskMachine, id: HopID) -> Bool {
        guard let (check, _) = machine.checkHead(head(200), id: id, publishesAtOnce: false),
            case .deliver(let source)? = check.verdict
        else {
            Issue.record("a 200 is decided at once")
            return false
        }
        _ = machine.publish(source, decision: nil, heldBody: nil, afterHandlers: false)
        return true
    }

    /// A short name for a hop end's step, for the tables.
    static func name(_ step: HopEndStep) -> String {
        switch step {
        case .stale: "stale"
        case .waitsForPublication: "waits for publication"
        case .finished: "finished"
        case .plain(let plain): plain.metricsReadable ? "plain, metrics" : "plain"
        case .decide(.success, let held): held == nil ? "decide success" : "decide success, held"
        case .decide(.failure(let error), _): "decide failure \(error.code.rawValue)"
        case .decide: "decide other"
        }
    }

    // MARK: - A hop the task has left

    @Test func everyCallbackOfAnOldHop_changesNothing() {
        Self.withRunningMachine { machine, _ in
            let old = HopID.local()
            #expect(machine.checkHead(Self.head(200), id: old, publishesAtOnce: true) == nil)
            #expect(machine.currentURL(of: old) == nil)
            #expect(machine.informationalURL(of: old) == nil)
            let sent = machine.sentBody(totalBytesSent: 10, totalBytesExpected: 10, now: 0, id: old)
            #expect(sent.0 == nil && sent.1 == nil)
            let core = Session(configuration: .ephemeral).dataTask(with: Self.url).core
            let body = Data("late".utf8).withUnsafeBytes { machine.receivedBody($0, id: old, core: core) }
            guard case .verdict(.abort(let error), _, _) = body else {
                Issue.record("a late body must be refused")
                return
            }
            #expect(error.code == .cancelled)
            #expect(Self.name(machine.hopEnded(Self.outcome(), id: old, quiet: true, originalURL: Self.url)) == "stale")
            // The current hop is untouched by all of it.
            #expect(machine.transferID != nil)
            #expect(machine.pipeline.bytesReceived == 0)
            #expect(machine.pipeline.bytesSent == 0)
            #expect(machine.pipeline.responseSource == nil)
        }
    }

    // MARK: - Becoming a download after the whole body arrived

    /// The first half asks the driver to write the queued body out (outside
    /// the lock); the second takes the body only if the consumer did not
    /// take any of it meanwhile.
    @Test(arguments: [false, true])
    func becomingADownload_afterTheEnd_writesFirst_andChecksTheBodyIsStillQueued(pulledMeanwhile: Bool) throws {
        let file = try DownloadDirectory(url: DownloadDirectory.defaultURL()).createFile().get()
        defer { unlink(file.url.path) }
        let core = Session(configuration: .ephemeral).dataTask(with: Self.url).core
        Self.withRunningMachine { machine, id in
            guard Self.published200(&machine, id: id) else { return }
            _ = Data("hello".utf8).withUnsafeBytes { machine.receivedBody($0, id: id, core: core) }
            _ = machine.hopEnded(Self.outcome(), id: id, quiet: true, originalURL: Self.url)
            _ = machine.finish(error: nil, metrics: nil, originalURL: Self.url)
            let first = machine.becomeDownload(into: file)
            guard case .writeWholeBodyFirst(let chunks, let bytes) = first else {
                Issue.record("a body that all arrived is written by the driver first: \(first)")
                return
            }
            #expect(chunks == [Data("hello".utf8)])
            #expect(bytes == 5)
            if pulledMeanwhile {
                // The consumer takes the response, then the body.
                _ = machine.takeReadyEvent()
                _ = machine.takeReadyEvent()
            }
            let second = machine.becomeDownload(afterWriting: file, bytes: bytes)
            switch (second, pulledMeanwhile) {
            case (.became(nil), false): #expect(machine.download != nil)
            case (.refused, true): #expect(machine.download == nil)
            default: Issue.record("unexpected second half \(second), pulled meanwhile: \(pulledMeanwhile)")
            }
        }
    }

    // MARK: - The hop's end

    struct EndRow: Sendable, CustomTestStringConvertible {
        let collect: Bool
        let quiet: Bool
        let readByHandlers: Bool
        let error: URLError.Code?
        let expected: String
        var testDescription: String {
            "\(collect ? "collect" : "events"), \(quiet ? "quiet" : "observed")"
                + "\(readByHandlers ? ", handlers" : "")\(error.map { ", error \($0.rawValue)" } ?? "") -> \(expected)"
        }
    }

    @Test(arguments: [
        // data(for:) with nobody observing: the task ends in the machine.
        EndRow(collect: true, quiet: true, readByHandlers: false, error: nil, expected: "finished"),
        // Somebody logs or traces: the driver completes, without metrics.
        EndRow(collect: true, quiet: false, readByHandlers: false, error: nil, expected: "plain"),
        // A handler reads the metrics: the transaction is kept for them.
        EndRow(collect: true, quiet: true, readByHandlers: true, error: nil, expected: "plain, metrics"),
        // An events consumer gets a metrics event.
        EndRow(collect: false, quiet: true, readByHandlers: false, error: nil, expected: "plain, metrics"),
        // A failure goes to the policies (retry, connectivity, ...).
        EndRow(collect: true, quiet: true, readByHandlers: false, error: .networkConnectionLost, expected: "decide failure -1005"),
    ])
    func aHopEnd_isTheTasksEnd_orGoesToThePolicies(row: EndRow) {
        Self.withRunningMachine(collect: row.collect, readByHandlers: row.readByHandlers) { machine, id in
            // The response was published (a 200 is never held).
            guard Self.published200(&machine, id: id) else { return }
            let step = machine.hopEnded(
                Self.outcome(row.error.map { URLError($0) }), id: id, quiet: row.quiet, originalURL: Self.url)
            #expect(Self.name(step) == row.expected)
            if case .plain(let plain) = step { #expect(plain.transactions.count == (plain.metricsReadable ? 1 : 0)) }
            // The hop is over either way: a second end is an old hop's.
            #expect(machine.transferID == nil)
        }
    }

    @Test func aHopEnd_whileHandlersDecide_waitsForThePublication() {
        Self.withRunningMachine { machine, id in
            _ = machine.checkHead(Self.head(200), id: id, publishesAtOnce: false)
            machine.responseGoesToHandlers()
            #expect(Self.name(machine.hopEnded(Self.outcome(), id: id, quiet: true, originalURL: Self.url)) == "waits for publication")
        }
    }

    @Test func aHopEnd_afterCancel_isTheCancellation() {
        Self.withRunningMachine { machine, id in
            let (_, exchange, _, canceling) = machine.cancel(error: URLError(.cancelled))
            #expect(canceling)
            #expect(exchange?.id == id)
            // The transfer ended well just as cancel() came: no next hop.
            #expect(Self.name(machine.hopEnded(Self.outcome(), id: id, quiet: true, originalURL: Self.url)) == "decide failure -999")
        }
    }

    @Test func aRetryableStatus_isHeld_forThePolicies() {
        Self.withRunningMachine(collect: true, retry: .standard) { machine, id in
            guard let (check, _) = machine.checkHead(Self.head(503), id: id, publishesAtOnce: true) else {
                Issue.record("the current hop's head")
                return
            }
            // Not decided under the first lock: the retry policy holds 503.
            #expect(check.verdict == nil)
            let source = ResponseSource(head: Self.head(503), url: Self.url)
            guard case .hold? = machine.receivedHead(source, id: id, redirectsAsFoundationNetworking: false, isSensitiveHeader: { _ in false })
            else {
                Issue.record("a 503 under a retry policy is held")
                return
            }
            #expect(Self.name(machine.hopEnded(Self.outcome(), id: id, quiet: true, originalURL: Self.url)) == "decide success, held")
            // The first attempt counts: the retry is the second.
            #expect(machine.retryInputs()?.attemptsMade == 1)
            machine.retryStarts()
            #expect(machine.retryInputs()?.attemptsMade == 2)
            #expect(machine.hop.held == nil)
        }
    }

    // MARK: - The consumer

    @Test func anEventOffered_toACollector_isNotForTheConsumer() {
        #expect(Self.withRunningMachine(collect: true) { machine, _ in machine.offer(.waitingForConnectivity).toConsumer } == false)
        #expect(Self.withRunningMachine(collect: false) { machine, _ in machine.offer(.waitingForConnectivity).toConsumer } == true)
    }

    @Test func aPull_takesTheQueuedResponse_thenWaits() {
        Self.withRunningMachine { machine, id in
            guard Self.published200(&machine, id: id) else { return }
            let first = machine.pull()
            guard case (.deliver(.response, _), _)? = first.ready else {
                Issue.record("the response is ready")
                return
            }
            #expect(first.looked)
            #expect(machine.pull().ready == nil)
        }
    }

    @Test func theRetryPolicy_isSetAndRemoved() {
        Self.withRunningMachine { machine, _ in
            #expect(machine.retryInputs() == nil)
            machine.setRetryPolicy(.standard)
            #expect(machine.retryInputs()?.policy.maximumAttempts == RetryPolicy.standard.maximumAttempts)
            machine.setRetryPolicy(nil)
            #expect(machine.retryInputs() == nil)
        }
    }
}

/// Stands in for whoever answers a hop; the machine only keeps it.
private struct MachineExchange: HopExchange {
    let id = HopID.local()
    var fetchType: TransactionMetrics.FetchType { .networkLoad }
    func suspend() {}
    func resume() {}
    func resumeReceiving() {}
    func cancel(error: URLError) {}
    func waitInline(until isDone: () -> Bool) {}
    func reportSent(_ sent: Int64, expected: Int64) {}
}
