// bench-asyncurlsession-events: our library through the event stream.
//
// `session.dataTask(with:)`, `resume()`, then `for try await event in task.events`:
// the body arrives as `.data` chunks that are counted and dropped (never
// collected), pacing between chunks for W6: the stream's backpressure should
// keep memory flat however slow the consumer is.
//
// With --download (W8, `Benchmarks --background`): `session.downloadTask(with:)`
// instead, the body going to a file (Download.swift); with --background the
// same in a background session, whose transfer runs in an agent process of
// its own (BackgroundRun.swift). Without either flag nothing here differs.
import AsyncURLSession
import BenchClientSupport
import BenchLockCount
import BenchSessionSetup
import Foundation

let clientName = "asyncurlsession-events"
let arguments = ClientArguments.parseAndPrepareOrExit()
let api = arguments.background
    ? "Session.downloadTask(with:).events, background session"
    : arguments.download ? "Session.downloadTask(with:).events" : "Session.dataTask(with:).events"
ProcessLimits.startWatchdog(client: clientName, arguments: arguments, api: api)

// --background: a private agent folder, then the background session (which
// starts the agent at once, before any request is timed).
let background = arguments.background ? BackgroundRun.startOrExit(arguments: arguments, client: clientName, api: api) : nil
let session = background?.session ?? SessionSetup.session(for: arguments)
let request = SessionSetup.request(for: arguments)
let expectedStatus = arguments.expectedStatus
let bytesPerSecond = arguments.consumeBytesPerSecond
let postBytes = arguments.postBytes

@Sendable func perform() async -> RequestOutcome {
    let task = session.dataTask(with: request)
    task.resume()
    var status = 0
    var received = 0
    var version: String?
    var pacer = Pacer(bytesPerSecond: bytesPerSecond)
    do {
        for try await event in task.events {
            if case .response(let response, _) = event { // the decision defaults to "allow"
                status = response.statusCode
            } else if case .data(let chunk) = event {
                received += chunk.count
                await pacer.consume(chunk.count)
            } else if case .metrics(let metrics) = event {
                version = metrics.transactionMetrics.last?.networkProtocolName.map(httpVersion)
            }
        }
    } catch {
        return .failure(error)
    }
    guard status == expectedStatus else { return .unexpectedStatus(status) }
    return RequestOutcome(bytesReceived: received, bytesSent: postBytes, httpVersion: version)
}

/// "h2" -> "2", "http/1.1" -> "1.1" (ALPN names, as URLSessionTaskMetrics).
/// Plain comparisons: this runs once per request, and Foundation's
/// `replacingOccurrences` (NSString bridging) cost more than some of the
/// library work being measured.
@Sendable func httpVersion(_ protocolName: String) -> String {
    switch protocolName {
    case "h2": "2"
    case "h3": "3"
    case "http/1.1": "1.1"
    case "http/1.0": "1.0"
    default: protocolName
    }
}

var result: ClientResult
if arguments.download {
    result = await BoundedConcurrency.measure(client: clientName, api: api, arguments: arguments) { _ in
        await Download.perform(session: session, request: request, expectedStatus: expectedStatus, httpVersion: httpVersion)
    }
} else {
    result = await BoundedConcurrency.measure(
        client: clientName, api: api, arguments: arguments, lockAcquisitions: OurLocks.acquisitions
    ) { _ in
        await perform()
    }
}
if let background {
    // The agent's CPU is not in the harness's CPU column (this process's own).
    result.notes = [background.agentNote()]
    background.stop()
}
result.printAndExit()
