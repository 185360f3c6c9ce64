// bench-ahc: AsyncHTTPClient (SwiftNIO), `execute(_:timeout:)`.
//
// - Collected bodies: `response.body.collect(upTo:)`.
// - `--stream` / `--consume-rate`: the body's AsyncSequence consumed chunk by
//   chunk (backpressured), pacing between chunks for W6.
// - HTTP/2 over TLS is negotiated by ALPN (httpVersion .automatic); the private
//   CA is trusted through TLSConfiguration.trustRoots.
// - The connection pool allows `concurrency` HTTP/1.1 connections per host.
import AsyncHTTPClient
import BenchClientSupport
import Foundation
import NIOCore
import NIOSSL

let clientName = "ahc"
let arguments = ClientArguments.parseAndPrepareOrExit()
let api = arguments.streamsBodies ? "HTTPClient.execute(_:timeout:) + body chunks" : "HTTPClient.execute(_:timeout:) + body.collect(upTo:)"
ProcessLimits.startWatchdog(client: clientName, arguments: arguments, api: api)

var configuration = HTTPClient.Configuration()
configuration.connectionPool = HTTPClient.Configuration.ConnectionPool(
    idleTimeout: .seconds(120),
    concurrentHTTP1ConnectionsPerHostSoftLimit: arguments.concurrency
)
configuration.timeout = HTTPClient.Configuration.Timeout(connect: .seconds(60), read: .seconds(120))
if let caPath = arguments.caCertificatePath {
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .file(caPath)
    configuration.tlsConfiguration = tls
}
let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)

var template = HTTPClientRequest(url: arguments.url.absoluteString)
if arguments.isPost {
    template.method = .POST
    template.body = .bytes(ByteBuffer(repeating: 0, count: arguments.postBytes))
}
let request = template
let expectedStatus = arguments.expectedStatus
let bytesPerSecond = arguments.consumeBytesPerSecond
let postBytes = arguments.postBytes

@Sendable func perform() async -> RequestOutcome {
    do {
        let response = try await client.execute(request, timeout: .seconds(600))
        let version = response.version.major == 2 ? "2" : "\(response.version.major).\(response.version.minor)"
        var received = 0
        if arguments.streamsBodies {
            var pacer = Pacer(bytesPerSecond: bytesPerSecond)
            for try await chunk in response.body {
                received += chunk.readableBytes
                await pacer.consume(chunk.readableBytes)
            }
        } else {
            received = try await response.body.collect(upTo: Int.max).readableBytes
        }
        guard Int(response.status.code) == expectedStatus else {
            return .unexpectedStatus(Int(response.status.code))
        }
        return RequestOutcome(bytesReceived: received, bytesSent: postBytes, httpVersion: version)
    } catch {
        return .failure(error)
    }
}

let result = await BoundedConcurrency.measure(client: clientName, api: api, arguments: arguments) { _ in
    await perform()
}
_ = try? await client.shutdown().get()
result.printAndExit()
