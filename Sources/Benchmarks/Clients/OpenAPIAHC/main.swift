// bench-openapi-ahc: the generated OpenAPI client on
// swift-openapi-async-http-client's AsyncHTTPClientTransport, with the
// HTTPClient set up as bench-ahc sets its own.
import AsyncHTTPClient
import BenchClientSupport
import BenchOpenAPIShared
import NIOCore
import OpenAPIAsyncHTTPClient

let arguments = ClientArguments.parseAndPrepareOrExit()
var configuration = HTTPClient.Configuration()
configuration.connectionPool = HTTPClient.Configuration.ConnectionPool(
    idleTimeout: .seconds(120),
    concurrentHTTP1ConnectionsPerHostSoftLimit: arguments.concurrency
)
configuration.timeout = HTTPClient.Configuration.Timeout(connect: .seconds(60), read: .seconds(120))
let httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
let transport = AsyncHTTPClientTransport(configuration: .init(client: httpClient, timeout: .seconds(600)))
await OpenAPIWorkload.run(
    client: "openapi-ahc", api: "generated client on AsyncHTTPClientTransport",
    transport: transport, arguments: arguments)
