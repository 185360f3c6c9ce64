// bench-asyncurlsession-events: our library through the event stream.
//
// `session.dataTask(with:)`, `resume()`, then `for try await event in task.events`:
// the body arrives as `.data` chunks that are counted and dropped (never
// collected), pacing between chunks for W6: the stream's backpressure should
// keep memory flat however slow the consumer is.
import AsyncURLSession
import BenchClientSupport
import Foundation

let clientName = "asyncurlsession-events"
let api = "Session.dataTask(with:).events"
let arguments = ClientArguments.parseOrExit()
ProcessLimits.raiseFileDescriptorLimit()
ProcessLimits.startWatchdog(seconds: arguments.timeoutSeconds, client: clientName, arguments: arguments, api: api)

var configuration = SessionConfiguration.default
configuration.httpMaximumConnectionsPerHost = arguments.concurrency
configuration.timeoutIntervalForRequest = 60
if let caPath = arguments.caCertificatePath {
    do {
        configuration.tlsTrustRootsPEM = try Data(contentsOf: URL(fileURLWithPath: caPath))
    } catch {
        FileHandle.standardError.write(Data("cannot read \(caPath): \(error)\n".utf8))
        exit(66)
    }
}
let session = Session(configuration: configuration)

var template = URLRequest(url: arguments.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 60)
if arguments.isPost {
    template.httpMethod = "POST"
    template.httpBody = Data(count: arguments.postBytes)
}
let request = template
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
@Sendable func httpVersion(_ protocolName: String) -> String {
    switch protocolName.lowercased() {
    case "h2": "2"
    case "h3": "3"
    default: protocolName.lowercased().replacingOccurrences(of: "http/", with: "")
    }
}

var result = ClientResult(client: clientName, workload: arguments.workload, api: api)
result.rssBeforeKiB = ProcessLimits.residentSetKiB()
result = await BoundedConcurrency.run(
    count: arguments.count, concurrency: arguments.concurrency, filling: result
) { _ in
    await perform()
}
result.print()
exit(result.exitStatus)
