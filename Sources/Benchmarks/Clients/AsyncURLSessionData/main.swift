// bench-asyncurlsession-data: our library through `session.data(for:)`, from
// the default executor, or with `--io-executor` from `Session.ioExecutor`
// (reported as asyncurlsession-io), or with `--feature cookies|cache|logging`
// one session feature turned on (reported as asyncurlsession-data+FEATURE;
// `SessionFeature` checks after the run that it did its work, else the run
// fails).
//
// Bodies are always collected (that is the call's contract), so a slow consumer
// (W6, `--consume-rate`) cannot be expressed: reported as unsupported.
import AsyncURLSession
import BenchClientSupport
import BenchLockCount
import BenchSessionSetup
import Foundation

let arguments = ClientArguments.parseAndPrepareOrExit()
let clientName = (arguments.ioExecutor ? "asyncurlsession-io" : "asyncurlsession-data")
    + (arguments.feature.map { "+" + $0.rawValue } ?? "")
let api = (arguments.ioExecutor ? "Session.data(for:) on Session.ioExecutor" : "Session.data(for:)")
    + (arguments.feature.map { ", \($0.rawValue) on" } ?? "")
if arguments.consumeBytesPerSecond > 0 {
    ClientResult.unsupported(
        client: clientName, arguments: arguments, api: api,
        reason: "data(for:) returns the whole body at once; a slow consumer needs the events path"
    )
}
ProcessLimits.startWatchdog(client: clientName, arguments: arguments, api: api)

let feature: SessionFeature?
do {
    feature = try arguments.feature.map(SessionFeature.init)
} catch {
    FileHandle.standardError.write(Data("cannot set up --feature: \(error)\n".utf8))
    exit(73)  // EX_CANTCREAT
}

let session = SessionSetup.session(for: arguments, feature: feature)
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
    await BoundedConcurrency.measure(
        client: clientName, api: api, arguments: arguments, lockAcquisitions: OurLocks.acquisitions
    ) { _ in
        await perform()
    }
}

// `--io-executor`: the requesting code runs on the session's I/O thread, as it
// would inside `withTaskExecutorPreference(Session.ioExecutor)` in a service.
var result = arguments.ioExecutor ? await withTaskExecutorPreference(Session.ioExecutor) { await measure() } : await measure()
if let feature {
    // After the timed part: the feature must have done its work.
    if let problem = feature.problem(for: request) {
        result.errors += 1
        result.firstError = "--feature \(feature.feature.rawValue) check failed: \(problem)"
    } else if let messages = feature.logMessages {
        result.notes = ["\(messages) log messages (\(messages / max(1, result.requests)) per request)"]
    }
    feature.removeFiles()
}
result.printAndExit()
