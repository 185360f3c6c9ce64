// The checks' bodies (see OpenAPIChecks.swift).
import Crypto
import Foundation
import OpenAPIRuntime

extension OpenAPIChecks {
    static func bytesIntact(_ context: Context) async throws -> String {
        let count = 1 << 20
        let output = try await context.client.getBytes(path: .init(count: count))
        guard case .ok(let ok) = output else { throw Failure("answered \(output)") }
        let data = try await Data(collecting: try ok.body.binary, upTo: count * 2)
        guard data == context.pattern(count) else {
            throw Failure("\(data.count) bytes, not the \(count) served")
        }
        return "\(data.count) bytes"
    }

    /// 4,000 bytes, 500 every 100 ms: the first chunk must reach the caller
    /// long before the last is sent (a buffering transport hands over all
    /// of it at the end, about 700 ms in).
    static func responseStreams(_ context: Context) async throws -> String {
        let started = ContinuousClock.now
        let output = try await context.client.drip(
            path: .init(count: 4_000), query: .init(chunk: 500, interval: 100))
        guard case .ok(let ok) = output else { throw Failure("answered \(output)") }
        var firstChunk: Duration?
        var received = 0
        var chunks = 0
        for try await chunk in try ok.body.binary {
            if firstChunk == nil { firstChunk = ContinuousClock.now - started }
            received += chunk.count
            chunks += 1
        }
        let total = ContinuousClock.now - started
        guard received == 4_000 else { throw Failure("\(received) of 4000 bytes") }
        let first = firstChunk ?? total
        let detail = "first bytes at \(milliseconds(first)) of \(milliseconds(total)) ms, \(chunks) chunks"
        guard first < total / 2 else { throw Failure("buffered: " + detail) }
        return detail
    }

    /// 16 pieces of 64 KiB from an async sequence, length unknown.
    static func unknownLengthUpload(_ context: Context) async throws -> String {
        let piece = context.pattern(64 << 10)
        let stream = AsyncStream<ArraySlice<UInt8>> { continuation in
            for _ in 0..<16 { continuation.yield(ArraySlice(piece)) }
            continuation.finish()
        }
        let body = HTTPBody(stream, length: .unknown, iterationBehavior: .single)
        let report = try await echo(body, context: context)
        let expected = Data((0..<16).flatMap { _ in piece })
        guard report.bodyLength == expected.count else {
            throw Failure("server read \(report.bodyLength) of \(expected.count) bytes")
        }
        guard report.bodySHA256 == SHA256Hex.of(expected) else { throw Failure("the bytes differ") }
        let framing = report.header("transfer-encoding").map { "Transfer-Encoding: \($0)" }
            ?? report.header("content-length").map { "Content-Length: \($0)" } ?? "no framing header"
        return "\(report.bodyLength) bytes, \(framing)"
    }

    static func knownLengthUpload(_ context: Context) async throws -> String {
        let data = context.pattern(100_000)
        let report = try await echo(HTTPBody(data), context: context)
        guard report.bodyLength == data.count, report.bodySHA256 == SHA256Hex.of(data) else {
            throw Failure("server read \(report.bodyLength) of \(data.count) bytes")
        }
        guard report.header("content-length") == String(data.count) else {
            throw Failure("sent as \(report.header("transfer-encoding").map { "Transfer-Encoding: \($0)" } ?? "?")")
        }
        return "Content-Length: \(data.count)"
    }

    static func echoRoundTrip(_ context: Context) async throws -> String {
        let data = context.pattern(1 << 20)
        let output = try await context.client.echoBody(body: .binary(HTTPBody(data)))
        guard case .ok(let ok) = output else { throw Failure("answered \(output)") }
        let back = try await Data(collecting: try ok.body.binary, upTo: data.count * 2)
        guard back == data else { throw Failure("\(back.count) bytes back, not the same") }
        return "\(back.count) bytes"
    }

    static func undocumentedStatus(_ context: Context) async throws -> String {
        let output = try await context.client.getStatus(path: .init(code: 503))
        guard case .undocumented(let status, _) = output, status == 503 else {
            throw Failure("answered \(output)")
        }
        return "undocumented(503)"
    }

    static func refusedConnection(_ context: Context) async throws -> String {
        do {
            let output = try await context.refusedClient.getStatus(path: .init(code: 200))
            throw Failure("answered \(output)")
        } catch let error as ClientError {
            return describe(error)
        }
    }

    /// A 100 s drip, cancelled once its first bytes are in (or after half
    /// a second, for a transport that hands over no body before its end):
    /// the caller's task must end within two seconds, not when the body would.
    static func cancellation(_ context: Context) async throws -> String {
        let client = context.client
        let firstBytes = AsyncStream<Void>.makeStream()
        let transfer = Task {
            let output = try await client.drip(path: .init(count: 1_000), query: .init(chunk: 10, interval: 1_000))
            guard case .ok(let ok) = output else { throw Failure("answered \(output)") }
            for try await _ in try ok.body.binary { firstBytes.continuation.yield() }
        }
        let timer = Task {
            try? await Task.sleep(for: .milliseconds(500))
            firstBytes.continuation.yield()
        }
        var iterator = firstBytes.stream.makeAsyncIterator()
        await iterator.next()
        timer.cancel()
        let cancelled = ContinuousClock.now
        transfer.cancel()
        let outcome = await transfer.result
        let waited = ContinuousClock.now - cancelled
        guard waited < .seconds(2) else { throw Failure("ended \(milliseconds(waited)) ms after the cancel") }
        switch outcome {
        case .success: throw Failure("the body ended normally after the cancel")
        case .failure(let error): return "ended after \(milliseconds(waited)) ms: \(describe(error))"
        }
    }

    static func echo(_ body: HTTPBody, context: Context) async throws -> Components.Schemas.EchoReport {
        let output = try await context.client.echoDigest(body: .binary(body))
        guard case .ok(let ok) = output else { throw Failure("answered \(output)") }
        return try ok.body.json
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

}

extension Components.Schemas.EchoReport {
    /// The first value of a request header, by case-insensitive name.
    func header(_ name: String) -> String? {
        headers.first { $0.first?.lowercased() == name && $0.count == 2 }?.last
    }
}

enum SHA256Hex {
    static func of(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }
}
