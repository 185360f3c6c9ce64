// bench-urlsessioncompat: our classic-API adapter, written as legacy code is.
//
// - Collected bodies: `dataTask(with:completionHandler:)`, the call most
//   legacy code makes.
// - `--stream` / `--consume-rate`: a data task whose per-task delegate counts
//   and discards each chunk in `didReceive data`, pacing there for W6. Unlike
//   FoundationNetworking, a slow delegate here slows the transfer.
// - HTTPS with a private CA: `URLSessionConfiguration.tlsTrustRootsPEM`.
import BenchClientSupport
import URLSessionCompat

let clientName = "urlsessioncompat"
let arguments = ClientArguments.parseOrExit()
ProcessLimits.raiseFileDescriptorLimit()
let streaming = arguments.streamsBodies
let api = streaming ? "URLSessionDataDelegate.didReceive(data:)" : "dataTask(with:completionHandler:)"
ProcessLimits.startWatchdog(seconds: arguments.timeoutSeconds, client: clientName, arguments: arguments, api: api)

let configuration = URLSessionConfiguration.ephemeral
configuration.httpMaximumConnectionsPerHost = arguments.concurrency
configuration.timeoutIntervalForRequest = 60
configuration.tlsTrustRootsPEM = arguments.caCertificatePEMOrExit()
let session = URLSession(configuration: configuration)

let request = arguments.requestTemplate(timeout: 60)
let expectedStatus = arguments.expectedStatus
let pacer = SharedPacer(bytesPerSecond: arguments.consumeBytesPerSecond)

/// Starts one request through whichever API this run uses; `done` gets its outcome.
@Sendable func start(_ index: Int, done: @escaping @Sendable (RequestOutcome) -> Void) {
    if streaming {
        let task = session.dataTask(with: request)
        task.delegate = ChunkCounter(expectedStatus: expectedStatus, pacer: pacer, finish: done)
        task.resume()
    } else {
        session.dataTask(with: request) { data, response, error in
            if let error { return done(.failure(error)) }
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard status == expectedStatus else { return done(.unexpectedStatus(status)) }
            done(RequestOutcome(bytesReceived: data?.count ?? 0, bytesSent: request.httpBody?.count ?? 0))
        }.resume()
    }
}

// Each request after the first of a chain starts from the previous one's
// completion handler (or `didCompleteWithError`), on the delegate queue.
let result = await CallbackChains.measure(client: clientName, api: api, arguments: arguments, start: start)
result.printAndExit()
