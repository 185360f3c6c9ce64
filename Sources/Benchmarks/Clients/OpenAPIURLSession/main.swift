// bench-openapi-urlsession: the generated OpenAPI client on
// swift-openapi-urlsession's URLSessionTransport, over FoundationNetworking.
// On Linux that transport buffers both bodies (its streaming mode needs
// Darwin's URLSession), so `--stream` still collects before the first chunk.
import BenchClientSupport
import BenchOpenAPIShared
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OpenAPIURLSession

let arguments = ClientArguments.parseAndPrepareOrExit()
let configuration = arguments.foundationConfiguration()
let transport = URLSessionTransport(configuration: .init(session: URLSession(configuration: configuration)))
await OpenAPIWorkload.run(
    client: "openapi-urlsession", api: "generated client on URLSessionTransport (buffered on Linux)",
    transport: transport, arguments: arguments)
