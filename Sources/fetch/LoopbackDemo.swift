import AsyncURLSession
import Foundation
import LoopbackServer

/// `fetch` with no URL: starts the loopback server (HTTP/1.1, and HTTPS with
/// HTTP/2) on 127.0.0.1 and shows the library at work against it.
struct LoopbackDemo {
    func run() async throws {
        let plain = try await LoopbackServer.start()
        let secure = try await LoopbackServer.start(LoopbackServer.Options(tls: true, http2: true))
        defer {
            Task { try? await plain.shutdown() }
            Task { try? await secure.shutdown() }
        }
        print("AsyncURLSession demo against the built-in loopback servers")
        print("  \(plain.baseURL.absoluteString)  (HTTP/1.1)")
        print("  \(secure.baseURL.absoluteString)  (HTTPS, HTTP/2 by ALPN, self-signed certificate)\n")

        let session = Session(configuration: .ephemeral)
        try await eventsOfOneTask(session, plain)
        try await echoPost(session, plain)
        try await concurrentRequests(session, plain)
        try await largeDownload(session, plain)
        try await http2(secure)
        await errors(plain)
        heading("7. Legacy delegate code, unchanged, on `import URLSessionCompat`")
        await LegacyDemo.run(plain.url("/redirect/1"))
        session.finishTasksAndInvalidate()
        try await plain.shutdown()
        try await secure.shutdown()
        print("\nDone. `fetch URL` fetches any http(s) URL; add --events to see its events, -o FILE to save the body.")
    }

    private func heading(_ text: String) {
        print("== \(text)")
    }

    private func eventsOfOneTask(_ session: Session, _ server: LoopbackServer) async throws {
        heading("1. One data task, event by event: for try await event in task.events")
        let task = session.dataTask(with: server.url("/chunked/40000?chunk=16384"))
        task.resume()
        try await EventPrinter().print(task.events)
        print()
    }

    private func echoPost(_ session: Session, _ server: LoopbackServer) async throws {
        heading("2. data(for:) with a POST body; the server echoes what it received")
        var request = URLRequest(url: server.url("/echo"))
        request.httpMethod = "POST"
        request.setValue("demo", forHTTPHeaderField: "X-Demo")
        request.httpBody = Data(repeating: 0x61, count: 100_000)
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        print("status \(status): \(String(decoding: data.prefix(300), as: UTF8.self))…\n")
    }

    private func concurrentRequests(_ session: Session, _ server: LoopbackServer) async throws {
        heading("3. 500 GETs of 1 KiB, 64 at a time, on one session's connection pool")
        let started = Date()
        try await withThrowingTaskGroup(of: Int.self) { group in
            var next = 0
            for _ in 0..<64 {
                group.addTask { try await session.data(from: server.url("/bytes/1024")).0.count }
                next += 1
            }
            while try await group.next() != nil {
                if next < 500 {
                    group.addTask { try await session.data(from: server.url("/bytes/1024")).0.count }
                    next += 1
                }
            }
        }
        let seconds = Date().timeIntervalSince(started)
        print(String(format: "500 requests in %.2f s (%.0f req/s); the server has accepted %d TCP connections in all\n",
                     seconds, 500 / seconds, server.acceptedConnections))
    }

    private func largeDownload(_ session: Session, _ server: LoopbackServer) async throws {
        let size = 64 * 1024 * 1024
        heading("4. A 64 MiB body streamed to a file, with a progress bar")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fetch-demo-\(getpid()).bin").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let task = session.dataTask(with: server.url("/bytes/\(size)"))
        task.resume()
        try await BodyWriter(outputPath: path, silent: false, printsHead: false).write(task)
        let written = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
        let matches = (try? Data(contentsOf: URL(fileURLWithPath: path))) == LoopbackServer.patternBody(count: size)
        print("wrote \(written) bytes; identical to what the server sent: \(matches)\n")
    }

    private func http2(_ server: LoopbackServer) async throws {
        heading("5. HTTPS: 20 concurrent requests multiplexed over HTTP/2")
        var configuration = SessionConfiguration.ephemeral
        configuration.tlsTrustRootsPEM = server.certificatePEM
        let session = Session(configuration: configuration)
        let protocols = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    let task = session.dataTask(with: server.url("/bytes/10000"))
                    task.resume()
                    var name = "?"
                    for try await event in task.events {
                        if case .metrics(let metrics) = event {
                            name = metrics.transactionMetrics.last?.networkProtocolName ?? "?"
                        }
                    }
                    return name
                }
            }
            return try await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
        }
        print("protocols: \(protocols); TCP connections used: \(server.acceptedConnections)\n")
        session.finishTasksAndInvalidate()
    }

    private func errors(_ server: LoopbackServer) async {
        heading("6. Failures are URLErrors with the codes URLSession uses")
        var configuration = SessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 1
        let session = Session(configuration: configuration)
        let cases: [(String, URL)] = [
            ("server drops the connection mid-body", server.url("/drop/100000?after=5000")),
            ("nothing listens on the port", URL(string: "http://127.0.0.1:1/")!),
            ("no byte for 1 s (timeoutIntervalForRequest = 1)", server.url("/stall-headers")),
            ("a scheme we do not speak", URL(string: "ftp://127.0.0.1/file")!),
        ]
        for (label, url) in cases {
            do {
                _ = try await session.data(from: url)
                print("\(label): no error?")
            } catch let error as URLError {
                print("\(label): URLError(.\(Self.name(of: error.code))) – \(error.localizedDescription)")
            } catch {
                print("\(label): \(error)")
            }
        }
        session.invalidateAndCancel()
    }

    private static func name(of code: URLError.Code) -> String {
        switch code {
        case .networkConnectionLost: return "networkConnectionLost"
        case .cannotConnectToHost: return "cannotConnectToHost"
        case .timedOut: return "timedOut"
        case .unsupportedURL: return "unsupportedURL"
        default: return "\(code.rawValue)"
        }
    }
}
