import Foundation
import FoundationNetworking
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// Runs `body`, failing if it takes longer than `seconds` (TestSupport's
/// `withTimeLimit`, under the name these tests were written with).
func withDeadline<T: Sendable>(
    seconds: Int = 30,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withTimeLimit(Double(seconds), body)
}

/// FoundationNetworking's URLSession as the HTTP client, cancellable from the calling task.
func fetch(_ request: URLRequest, session: URLSession = .shared) async throws -> (Data, HTTPURLResponse) {
    let started = Mutex<URLSessionDataTask?>(nil)
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            let task = session.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else if let response = response as? HTTPURLResponse {
                    continuation.resume(returning: (data ?? Data(), response))
                } else {
                    continuation.resume(throwing: URLError(.badServerResponse))
                }
            }
            started.withLock { $0 = task }
            task.resume()
        }
    } onCancel: {
        started.withLock { $0?.cancel() }
    }
}

func fetch(_ url: URL, session: URLSession = .shared) async throws -> (Data, HTTPURLResponse) {
    try await fetch(URLRequest(url: url), session: session)
}

/// A URLSession that does not share connections with other tests.
func makeSession() -> URLSession {
    URLSession(configuration: .ephemeral)
}

/// Result of one `curl` run.
struct CurlResult {
    let exitCode: Int32
    /// What `-w` printed.
    let writeOut: String
    let body: Data
    let stderr: String
    /// The response heads as received (`-D`), one after the other when curl followed redirects
    /// or answered a challenge.
    let headers: Data

    /// Values of every header field `name` (any case) in `headers`, in order; each value is
    /// what follows the colon up to CRLF, so a lone CR in a value stays in it.
    func headerValues(_ name: String) -> [String] {
        let prefix = Array((name + ":").lowercased().utf8)
        var values: [String] = []
        var lineStart = headers.startIndex
        while lineStart < headers.endIndex {
            let lineEnd = headers[lineStart...].firstRange(of: Data("\r\n".utf8))?.lowerBound ?? headers.endIndex
            let line = headers[lineStart..<lineEnd]
            if line.count >= prefix.count, line.prefix(prefix.count).map({ Self.lowercased($0) }) == prefix {
                let value = String(decoding: line.dropFirst(prefix.count), as: UTF8.self)
                values.append(value.trimmingCharacters(in: .whitespaces))
            }
            lineStart = min(lineEnd + 2, headers.endIndex)
        }
        return values
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}

/// Runs the `curl` command line (libcurl's own client; used for HTTPS and HTTP/2), writing the
/// body to a temporary file so large bodies cannot fill a pipe.
func curl(_ arguments: [String], url: URL) async throws -> CurlResult {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("loopback-curl-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let bodyFile = directory.appendingPathComponent("body")
    let headersFile = directory.appendingPathComponent("headers")

    let arguments = ["-sS", "--max-time", "20", "-o", bodyFile.path, "-D", headersFile.path]
        + arguments + [url.absoluteString]
    // ChildProcess (posix_spawn), never Foundation.Process: see ChildProcess.
    let result = try await ChildProcess.run("/usr/bin/curl", arguments)
    let exitCode = result.status
    let writeOut = result.outputText
    let errors = result.errorText
    let body = (try? Data(contentsOf: bodyFile)) ?? Data()
    let headers = (try? Data(contentsOf: headersFile)) ?? Data()
    return CurlResult(exitCode: exitCode, writeOut: writeOut, body: body, stderr: errors, headers: headers)
}

/// Writes `data` to a fresh temporary file (for curl's --cacert) and returns its path.
func temporaryFile(_ data: Data, name: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("loopback-\(UUID().uuidString)-\(name)")
    try data.write(to: url)
    return url
}

/// Starts a server, runs `body` with it under a deadline, and always shuts the server down.
func withServer<T: Sendable>(
    _ options: LoopbackServer.Options = .init(),
    seconds: Int = 30,
    _ body: @escaping @Sendable (LoopbackServer) async throws -> T
) async throws -> T {
    try await withDeadline(seconds: seconds) {
        let server = try await LoopbackServer.start(options)
        do {
            let result = try await body(server)
            try await server.shutdown()
            return result
        } catch {
            try? await server.shutdown()
            throw error
        }
    }
}

/// Starts a plain HTTP/1.1 server, or with `http2` a TLS server that offers HTTP/2, and runs
/// `body` with it and the curl arguments that reach it (trust its certificate, ask for h2).
func withServer<T: Sendable>(
    http2: Bool,
    seconds: Int = 30,
    _ body: @escaping @Sendable (LoopbackServer, [String]) async throws -> T
) async throws -> T {
    try await withServer(.init(tls: http2), seconds: seconds) { server in
        guard http2, let pem = server.certificatePEM else {
            return try await body(server, [])
        }
        let caFile = try temporaryFile(pem, name: "ca.pem")
        defer { try? FileManager.default.removeItem(at: caFile) }
        return try await body(server, ["--cacert", caFile.path, "--http2"])
    }
}
