// bench-asyncurlsession-data: our library through `session.data(for:)`.
//
// Bodies are always collected (that is the call's contract), so a slow consumer
// (W6, `--consume-rate`) cannot be expressed: reported as unsupported.
import AsyncURLSession
import BenchClientSupport
import Foundation

let clientName = "asyncurlsession-data"
let api = "Session.data(for:)"
let arguments = ClientArguments.parseOrExit()
ProcessLimits.raiseFileDescriptorLimit()
if arguments.consumeBytesPerSecond > 0 {
    ClientResult.unsupported(
        client: clientName, arguments: arguments, api: api,
        reason: "data(for:) returns the whole body at once; a slow consumer needs the events path"
    )
}
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
let postBytes = arguments.postBytes

@Sendable func perform() async -> RequestOutcome {
    do {
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == expectedStatus else { return .unexpectedStatus(status) }
        return RequestOutcome(bytesReceived: data.count, bytesSent: postBytes)
    } catch {
        return .failure(error)
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
