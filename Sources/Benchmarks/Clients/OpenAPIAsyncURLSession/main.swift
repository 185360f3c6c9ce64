// bench-openapi-asyncurlsession: the generated OpenAPI client on our
// transport (AsyncURLSessionOpenAPI), with the session every client of ours
// uses (BenchSessionSetup).
import AsyncURLSessionOpenAPI
import BenchClientSupport
import BenchOpenAPIShared
import BenchSessionSetup

let arguments = ClientArguments.parseAndPrepareOrExit()
let transport = AsyncURLSessionTransport(configuration: .init(session: SessionSetup.session(for: arguments)))
await OpenAPIWorkload.run(
    client: "openapi-asyncurlsession", api: "generated client on AsyncURLSessionTransport",
    transport: transport, arguments: arguments)
