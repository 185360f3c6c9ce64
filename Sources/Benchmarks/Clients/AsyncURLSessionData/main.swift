// bench-asyncurlsession-data: our library through `session.data(for:)`.
//
// Bodies are always collected (that is the call's contract), so a slow consumer
// (W6, `--consume-rate`) cannot be expressed: reported as unsupported.
import AsyncURLSession
import BenchClientSupport
import BenchSessionSetup
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

let session = SessionSetup.session(for: arguments)
let request = SessionSetup.request(for: arguments)
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

let result = await BoundedConcurrency.measure(client: clientName, api: api, arguments: arguments) { _ in
    await perform()
}
result.print()
exit(result.exitStatus)
