// bench-urlsessioncompat: our classic-API adapter, written as legacy code is.
//
// - Collected bodies: `dataTask(with:completionHandler:)`, the call most
//   legacy code makes.
// - `--stream` / `--consume-rate`: a data task whose per-task delegate counts
//   and discards each chunk in `didReceive data`, pacing there for W6. Unlike
//   FoundationNetworking, a slow delegate here slows the transfer.
// - `--classic-style blocking`: the same call, each chain a thread of its own
//   that blocks on a semaphore until the handler signals it (command-line
//   tools and scripts). `--classic-style async`: `try await
//   session.data(for:)` on the classic session.
// - HTTPS with a private CA: `URLSessionConfiguration.tlsTrustRootsPEM`.
import BenchClientSupport
import BenchLockCount
import URLSessionCompat

let clientName = "urlsessioncompat"
let arguments = ClientArguments.parseAndPrepareOrExit()
let streaming = arguments.streamsBodies
let api: String
switch (streaming, arguments.classicStyle) {
case (_, .async?): api = "URLSession.data(for:)"
case (true, _): api = "URLSessionDataDelegate.didReceive(data:)"
case (false, nil): api = "dataTask(with:completionHandler:)"
case (false, .blocking?): api = "dataTask(with:completionHandler:) + DispatchSemaphore.wait()"
}
ProcessLimits.startWatchdog(client: clientName, arguments: arguments, api: api)
if arguments.arrivalRate > 0 && arguments.classicStyle != .async {
    // An open loop starts requests on a clock, not from the previous one's
    // handler or a blocked thread: the classic `data(for:)` is its row.
    ClientResult.unsupported(
        client: clientName, arguments: arguments, api: api,
        reason: "the open loop (W9) is the classic data(for:)'s: see urlsessioncompat-async")
}

if streaming && arguments.classicStyle == .async {
    // `data(for:)` hands the body over whole: W6's slow reader would hold
    // all of it in memory, which measures the call's contract, not a reader.
    ClientResult.unsupported(
        client: clientName, arguments: arguments, api: api,
        reason: "the classic data(for:) returns the whole body at once; a slow reader is the delegate's: see urlsessioncompat")
}

let configuration = URLSessionConfiguration.ephemeral
configuration.httpMaximumConnectionsPerHost = arguments.concurrency
configuration.timeoutIntervalForRequest = 60
// Nothing answers from memory (an ephemeral configuration has a cache and a
// cookie store of its own): every request goes to nginx, as raw libcurl's.
configuration.urlCache = nil
configuration.httpCookieStorage = nil
configuration.httpShouldSetCookies = false
configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
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

/// The outcome of one classic `data(for:)` call.
@Sendable func fetchAsync(_ index: Int) async -> RequestOutcome {
    await .collected(expectedStatus: expectedStatus, bytesSent: request.httpBody?.count ?? 0) {
        try await session.data(for: request)
    }
}

let result: ClientResult
switch arguments.classicStyle {
case nil:
    // Each request after the first of a chain starts from the previous one's
    // completion handler (or `didCompleteWithError`), on the delegate queue.
    result = await CallbackChains.measure(
        client: clientName, api: api, arguments: arguments, lockAcquisitions: OurLocks.acquisitions, start: start)
case .blocking?:
    result = await CallbackChains.measure(
        client: clientName, api: api, arguments: arguments, lockAcquisitions: OurLocks.acquisitions,
        style: .blockingThreads, start: start)
case .async?:
    result = await BoundedConcurrency.measure(
        client: clientName, api: api, arguments: arguments, lockAcquisitions: OurLocks.acquisitions, request: fetchAsync)
}
result.printAndExit()
