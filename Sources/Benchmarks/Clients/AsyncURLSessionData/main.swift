// bench-asyncurlsession-data: our library through `session.data(for:)`, from
// the default executor, or with `--io-executor` from `Session.ioExecutor`
// (reported as asyncurlsession-io).
//
// Bodies are always collected (that is the call's contract), so a slow consumer
// (W6, `--consume-rate`) cannot be expressed: reported as unsupported.
import AsyncURLSession
import BenchClientSupport
import BenchSessionSetup
import Foundation

let arguments = ClientArguments.parseOrExit()
let clientName = arguments.ioExecutor ? "asyncurlsession-io" : "asyncurlsession-data"
let api = arguments.ioExecutor ? "Session.data(for:) on Session.ioExecutor" : "Session.data(for:)"
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

func measure() async -> ClientResult {
    await BoundedConcurrency.measure(client: clientName, api: api, arguments: arguments) { _ in
        await perform()
    }
}

// `--io-executor`: the requesting code runs on the session's I/O thread, as it
// would inside `withTaskExecutorPreference(Session.ioExecutor)` in a service.
let result = arguments.ioExecutor ? await withTaskExecutorPreference(Session.ioExecutor) { await measure() } : await measure()
result.printAndExit()
