// What a transport must get right for a generated client, checked on the
// loopback server's routes (openapi-check runs these for each transport and
// prints them side by side). Each check is one behaviour a user of the
// generated client relies on; each is bounded in time, so a transport that
// hangs fails the check instead of the run.
import Foundation
import OpenAPIRuntime

/// One check's outcome for one transport.
public struct OpenAPICheckResult: Sendable {
    public let name: String
    public let passed: Bool
    /// What was seen: a figure, or why it failed.
    public let detail: String
}

public enum OpenAPIChecks {
    /// The checks in the order they run, by name.
    public static let names = checks.map(\.name)

    /// Runs every check against the loopback server at `serverURL` through
    /// `transport`. `pattern(count)` is the server's byte pattern (what
    /// /bytes/N serves). `refusedURL` is an address nothing listens on.
    public static func run(
        serverURL: URL, refusedURL: URL, transport: some ClientTransport,
        pattern: @escaping @Sendable (Int) -> Data, limit: Duration = .seconds(20)
    ) async -> [OpenAPICheckResult] {
        let context = Context(
            client: Client(serverURL: serverURL, transport: transport),
            refusedClient: Client(serverURL: refusedURL, transport: transport),
            pattern: pattern)
        var results: [OpenAPICheckResult] = []
        for check in checks {
            results.append(await bounded(check, context: context, limit: limit))
        }
        return results
    }

    struct Context: Sendable {
        let client: Client
        let refusedClient: Client
        let pattern: @Sendable (Int) -> Data
    }

    struct Check: Sendable {
        let name: String
        /// Returns the detail on success; throws a `Failure` (or any error) otherwise.
        let body: @Sendable (Context) async throws -> String
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The check, or a failure when it has not answered within `limit`.
    static func bounded(_ check: Check, context: Context, limit: Duration) async -> OpenAPICheckResult {
        await withTaskGroup(of: OpenAPICheckResult?.self) { group in
            group.addTask {
                do {
                    return OpenAPICheckResult(name: check.name, passed: true, detail: try await check.body(context))
                } catch {
                    return OpenAPICheckResult(name: check.name, passed: false, detail: describe(error))
                }
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return Task.isCancelled ? nil : OpenAPICheckResult(
                    name: check.name, passed: false, detail: "no outcome within \(limit.components.seconds) s")
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? OpenAPICheckResult(name: check.name, passed: false, detail: "no outcome")
        }
    }

    /// A short account of an error: the generated client wraps the
    /// transport's in a `ClientError`; its underlying error is what differs.
    static func describe(_ error: any Error) -> String {
        let underlying = (error as? ClientError)?.underlyingError ?? error
        if let failure = underlying as? Failure { return failure.description }
        if let urlError = underlying as? URLError {
            return "URLError(\(urlError.code.rawValue))"
        }
        let text = "\(type(of: underlying)): \(underlying)"
        return text.count > 100 ? String(text.prefix(100)) + "..." : text
    }

    static let checks: [Check] = [
        Check(name: "1 MiB GET, bytes intact", body: bytesIntact),
        Check(name: "response body streams before its end", body: responseStreams),
        Check(name: "request body of unknown length", body: unknownLengthUpload),
        Check(name: "request body of known length has Content-Length", body: knownLengthUpload),
        Check(name: "1 MiB sent and echoed back intact", body: echoRoundTrip),
        Check(name: "undocumented status reaches the caller", body: undocumentedStatus),
        Check(name: "refused connection is an error", body: refusedConnection),
        Check(name: "cancelling the caller ends a dripping transfer", body: cancellation),
    ]
}
