// bench-asyncurlsession-events: our library through the event stream.
//
// `session.dataTask(with:)`, `resume()`, then `for try await event in task.events`:
// the body arrives as `.data` chunks that are counted and dropped (never
// collected), pacing between chunks for W6: the stream's backpressure should
// keep memory flat however slow the consumer is.
import AsyncURLSession
import BenchClientSupport
import BenchSessionSetup
import Foundation

let clientName = "asyncurlsession-events"
let api = "Session.dataTask(with:).events"
let arguments = ClientArguments.parseOrExit()
ProcessLimits.raiseFileDescriptorLimit()
ProcessLimits.startWatchdog(seconds: arguments.timeoutSeconds, client: clientName, arguments: arguments, api: api)

let session = SessionSetup.session(for: arguments)
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

let result = await BoundedConcurrency.measure(client: clientName, api: api, arguments: arguments) { _ in
    await perform()
}
result.printAndExit()
