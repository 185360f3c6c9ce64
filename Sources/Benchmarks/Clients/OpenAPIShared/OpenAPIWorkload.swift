// The benchmark's workloads through the generated client (`Client`, made by
// swift-openapi-generator's plugin from openapi.yaml), on whichever
// transport the executable hands in. Only the transport differs between the
// three OpenAPI clients, so their ratios compare transports, not code.
//
// - GETs of /files/NAME: `getFile`; the body collected with
//   `Data(collecting:upTo:)` or, with `--stream` / `--consume-rate`,
//   iterated chunk by chunk (paced for W6).
// - POSTs to /sink: `postSink` with a body of known length made once.
// - Any other URL (nginx's drip files, W7) is reported as unsupported: the
//   spec has no operation for it.
import BenchClientSupport
import Foundation
import OpenAPIRuntime

public enum OpenAPIWorkload {
    /// Runs the workload of `arguments` through a generated client on
    /// `transport`, prints the result line and exits.
    public static func run(
        client clientName: String, api: String, transport: some ClientTransport, arguments: ClientArguments
    ) async -> Never {
        let operation: Operation
        do {
            operation = try Operation(arguments)
        } catch {
            ClientResult.unsupported(client: clientName, arguments: arguments, api: api, reason: "\(error)")
        }
        ProcessLimits.startWatchdog(client: clientName, arguments: arguments, api: api)
        let client = Client(serverURL: operation.serverURL, transport: transport)
        let postBody = Data(count: arguments.postBytes)
        let streaming = arguments.streamsBodies
        let bytesPerSecond = arguments.consumeBytesPerSecond
        let result = await BoundedConcurrency.measure(client: clientName, api: api, arguments: arguments) { _ in
            do {
                switch operation {
                case .getFile(_, let name):
                    let output = try await client.getFile(path: .init(name: name))
                    guard case .ok(let ok) = output else { return .unexpectedStatus(output.statusCode) }
                    let body = try ok.body.binary
                    var received = 0
                    if streaming {
                        var pacer = Pacer(bytesPerSecond: bytesPerSecond)
                        for try await chunk in body {
                            received += chunk.count
                            await pacer.consume(chunk.count)
                        }
                    } else {
                        received = try await Data(collecting: body, upTo: .max).count
                    }
                    return RequestOutcome(bytesReceived: received)
                case .postSink:
                    let output = try await client.postSink(body: .binary(HTTPBody(postBody)))
                    guard case .noContent = output else { return .unexpectedStatus(output.statusCode) }
                    return RequestOutcome(bytesSent: postBody.count)
                }
            } catch {
                return .failure(error)
            }
        }
        result.printAndExit()
    }

    /// What the run's URL maps to in the spec.
    enum Operation {
        case getFile(serverURL: URL, name: String)
        case postSink(serverURL: URL)

        struct NotInSpec: Error, CustomStringConvertible {
            let description: String
        }

        init(_ arguments: ClientArguments) throws {
            var components = URLComponents(url: arguments.url, resolvingAgainstBaseURL: false)
            let path = components?.path ?? ""
            components?.path = ""
            components?.query = nil
            guard let serverURL = components?.url else {
                throw NotInSpec(description: "no server URL in \(arguments.url)")
            }
            if arguments.isPost, path == "/sink" {
                self = .postSink(serverURL: serverURL)
            } else if !arguments.isPost, path.hasPrefix("/files/"), !path.dropFirst(7).contains("/") {
                self = .getFile(serverURL: serverURL, name: String(path.dropFirst(7)))
            } else {
                throw NotInSpec(description: "the OpenAPI spec has no operation for \(arguments.isPost ? "POST" : "GET") \(path)")
            }
        }

        var serverURL: URL {
            switch self {
            case .getFile(let url, _), .postSink(let url): url
            }
        }
    }
}

extension Operations.GetFile.Output {
    /// The status of an answer the spec did not document (0 when documented).
    var statusCode: Int {
        if case .undocumented(let status, _) = self { return status }
        return 0
    }
}

extension Operations.PostSink.Output {
    var statusCode: Int {
        if case .undocumented(let status, _) = self { return status }
        return 0
    }
}
