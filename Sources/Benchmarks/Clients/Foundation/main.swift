// bench-foundation: swift-corelibs-foundation's URLSession (FoundationNetworking,
// itself on libcurl).
//
// - Collected bodies: `URLSession.data(for:)` (the async API works on Linux).
// - `--stream` / `--consume-rate`: a data task whose delegate counts and discards
//   each chunk in `urlSession(_:dataTask:didReceive:)`, pacing there for W6.
//   That is the only incremental API corelibs has; it has no backpressure.
// - HTTPS with a private CA: corelibs on Linux trusts only libcurl's built-in CA
//   bundle; SSL_CERT_FILE, CURL_CA_BUNDLE and URLSessionCertificateAuthorityInfoFile
//   change nothing (tried). The client probes once and, if the certificate is
//   refused, reports the workload as unsupported instead of failing.
import BenchClientSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

let clientName = "foundation"
let arguments = ClientArguments.parseAndPrepareOrExit()
let streaming = arguments.streamsBodies
let api = streaming ? "URLSessionDataDelegate.didReceive(data:)" : "URLSession.data(for:)"
ProcessLimits.startWatchdog(client: clientName, arguments: arguments, api: api)

let configuration = arguments.foundationConfiguration()

let request = arguments.requestTemplate(timeout: 120)
let expectedStatus = arguments.expectedStatus

let delegate = StreamingDelegate(bytesPerSecond: arguments.consumeBytesPerSecond)
let delegateQueue = OperationQueue()
delegateQueue.maxConcurrentOperationCount = 1
let session = URLSession(configuration: configuration, delegate: streaming ? delegate : nil, delegateQueue: delegateQueue)

/// One request, through whichever API this run uses.
@Sendable func perform() async -> RequestOutcome {
    if streaming {
        return await delegate.run(request, in: session, expectedStatus: expectedStatus)
    }
    return await .collected(expectedStatus: expectedStatus, bytesSent: request.httpBody?.count ?? 0) {
        try await session.data(for: request)
    }
}

if arguments.url.scheme == "https" {
    // Probe: is the private CA trusted at all?
    do {
        _ = try await session.data(for: request)
    } catch {
        ClientResult.unsupported(
            client: clientName, arguments: arguments, api: api,
            reason: "corelibs URLSession on Linux trusts only libcurl's built-in CA bundle "
                + "(SSL_CERT_FILE, CURL_CA_BUNDLE, URLSessionCertificateAuthorityInfoFile ignored); "
                + "probe: \((error as NSError).localizedDescription)"
        )
    }
}

let result = await BoundedConcurrency.measure(client: clientName, api: api, arguments: arguments) { _ in
    await perform()
}
result.printAndExit()
