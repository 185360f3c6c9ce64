import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Testing

/// `SessionConfiguration.harRecorder`: one HAR 1.2 entry per hop, on disk
/// when the task ends, secrets redacted.
@Suite struct HARRecorderTests {
    @Test func redirectChain_isOneEntryPerHop_inAValidHAR() async throws {
        try await withServer { server in
            try await withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent("redirects.har")
                var configuration = SessionConfiguration.ephemeral
                configuration.harRecorder = try HARRecorder(fileURL: file)
                let session = Session(configuration: configuration)
                let (data, response) = try await session.data(for: URLRequest(url: server.url("/redirect/2?x=1")))
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                // On disk as data(for:) returns: nothing to close first.
                let har = try HARFileCheck(file)
                #expect(har.statuses == [302, 302, 200])
                let urls = har.entries.map { har.request($0)["url"] as? String ?? "" }
                #expect(urls[0].hasSuffix("/redirect/2?x=1"))
                #expect(urls[2].hasSuffix("/redirect/0"))
                let first = har.entries[0]
                #expect(har.request(first)["method"] as? String == "GET")
                #expect(har.request(first)["httpVersion"] as? String == "HTTP/1.1")
                let query = har.request(first)["queryString"] as? [[String: Any]] ?? []
                #expect(query.count == 1 && query.first?["name"] as? String == "x" && query.first?["value"] as? String == "1")
                // The headers as sent: the session's own (Accept-Encoding, User-Agent) included.
                #expect(har.headerValues("User-Agent", in: har.request(first)) == ["AsyncURLSession"])
                #expect(har.headerValues("Host", in: har.request(first)).first?.hasPrefix("127.0.0.1:") == true)
                #expect(har.headerValues("Accept-Encoding", in: har.request(first)).first?.contains("gzip") == true)
                #expect(har.response(first)["redirectURL"] as? String == server.url("/redirect/1").absoluteString)
                #expect(har.response(first)["statusText"] as? String == "Found")
                let last = har.entries[2]
                #expect(har.body(last) == data)
                #expect(har.content(last)["size"] as? Int == data.count)
                #expect((har.response(last)["headers"] as? [Any])?.isEmpty == false)
                #expect(har.response(last)["bodySize"] as? Int == data.count)
                #expect(har.request(first)["headersSize"] as? Int ?? 0 > 0)
                for entry in har.entries {
                    #expect(entry["serverIPAddress"] as? String == "127.0.0.1")
                    #expect(Int(entry["connection"] as? String ?? "") != nil)
                }
                // A new connection's timings: connect happened, no TLS over http.
                let timings = first["timings"] as? [String: Any] ?? [:]
                #expect((timings["connect"] as? NSNumber)?.doubleValue ?? -1 >= 0)
                #expect((timings["ssl"] as? NSNumber)?.doubleValue == -1)
            }
        }
    }

    @Test func eventsTask_bodiesAsTextOrBase64_requestBodyWhenAsked() async throws {
        try await withServer { server in
            try await withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent("bodies.har")
                var configuration = SessionConfiguration.ephemeral
                configuration.harRecorder = try HARRecorder(
                    fileURL: file, options: HARRecorder.Options(recordsRequestBodies: true))
                let session = Session(configuration: configuration)
                var request = URLRequest(url: server.url("/echo-body"))
                request.httpMethod = "POST"
                request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
                let binary = Data((0..<300).map { UInt8(truncatingIfNeeded: $0 * 7 + 0x80) })
                request.httpBody = binary
                let task = session.dataTask(with: request)
                task.resume()
                var received = Data()
                for try await event in task.events {
                    if case .data(let chunk) = event { received.append(chunk) }
                }
                #expect(received == binary)
                let (text, _) = try await session.data(for: URLRequest(url: server.url("/redirect/0")))
                let har = try HARFileCheck(file)
                #expect(har.statuses == [200, 200])
                let echo = har.entries[0]
                #expect(har.content(echo)["encoding"] as? String == "base64")
                #expect(har.body(echo) == binary)
                let postData = har.request(echo)["postData"] as? [String: Any] ?? [:]
                #expect(postData["mimeType"] as? String == "application/octet-stream")
                #expect(Data(base64Encoded: postData["text"] as? String ?? "") == binary)
                #expect(har.request(echo)["bodySize"] as? Int == binary.count)
                #expect(har.content(har.entries[1])["encoding"] == nil)
                #expect(har.content(har.entries[1])["text"] as? String == String(decoding: text, as: UTF8.self))
            }
        }
    }

    @Test func bodiesAreCutAtTheLimit_butTheirSizeIsWhole() async throws {
        try await withServer { server in
            try await withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent("cut.har")
                var configuration = SessionConfiguration.ephemeral
                configuration.harRecorder = try HARRecorder(fileURL: file, options: HARRecorder.Options(maximumBodySize: 100))
                let (data, _) = try await Session(configuration: configuration).data(for: URLRequest(url: server.url("/chunked/5000?chunk=700")))
                #expect(data.count == 5000)
                let har = try HARFileCheck(file)
                #expect(har.content(har.entries[0])["size"] as? Int == 5000)
                #expect(har.body(har.entries[0]) == data.prefix(100))
                #expect(har.headerValues("Transfer-Encoding", in: har.response(har.entries[0])) == ["chunked"])
            }
        }
    }

    /// Bytes a slow consumer made the task hand back (`.pause`) come again
    /// later: they are recorded once, when taken.
    @Test func aConsumerBehind_isRecordedOnce_withTheBodysSize() async throws {
        try await withServer { server in
            try await withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent("slow.har")
                var configuration = SessionConfiguration.ephemeral
                configuration.harRecorder = try HARRecorder(
                    fileURL: file, options: HARRecorder.Options(maximumBodySize: 1 << 20))
                configuration.streamBufferHighWatermark = 16 << 10
                configuration.streamBufferLowWatermark = 4 << 10
                let task = Session(configuration: configuration).dataTask(with: server.url("/bytes/\(256 << 10)"))
                task.resume()
                let received = try await consumeSlowly(task)
                #expect(received.count == 256 << 10)
                let har = try HARFileCheck(file)
                #expect(har.content(har.entries[0])["size"] as? Int == received.count)
                #expect(har.body(har.entries[0]) == received)
            }
        }
    }

    @Test func secretsAreRedactedByDefault() async throws {
        try await withServer { server in
            try await withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent("secrets.har")
                var configuration = SessionConfiguration.ephemeral
                configuration.httpAdditionalHeaders = ["X-Api-Key": "k3y-from-session"]
                configuration.sensitiveHeaderNames = ["X-Api-Key"]
                configuration.harRecorder = try HARRecorder(
                    fileURL: file, options: HARRecorder.Options(redactedHeaderNames: ["X-Other-Secret"]))
                let session = Session(configuration: configuration)
                var components = URLComponents(url: server.url("/cookies/set?sid=ch0c0late"), resolvingAgainstBaseURL: false)!
                components.user = "ada"
                components.password = "pa55w0rd"
                var request = URLRequest(url: components.url!)
                request.setValue("Bearer t0ken-s3cret", forHTTPHeaderField: "Authorization")
                request.setValue("old=c00kie-s3cret", forHTTPHeaderField: "Cookie")
                request.setValue("0ther-s3cret", forHTTPHeaderField: "X-Other-Secret")
                let (_, response) = try await session.data(for: request)
                #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Set-Cookie")?.contains("ch0c0late") == true)
                let text = try String(contentsOf: file, encoding: .utf8)
                for secret in ["t0ken-s3cret", "c00kie-s3cret", "0ther-s3cret", "k3y-from-session", "pa55w0rd", "sid=ch0c0late; Path"] {
                    #expect(!text.contains(secret), "\(secret) is in the HAR")
                }
                let har = try HARFileCheck(file)
                let entry = try #require(har.entries.first)
                #expect(har.headerValues("Authorization", in: har.request(entry)) == ["<redacted>"])
                #expect(har.headerValues("Cookie", in: har.request(entry)) == ["<redacted>"])
                #expect(har.headerValues("X-Api-Key", in: har.request(entry)) == ["<redacted>"])
                #expect(har.headerValues("Set-Cookie", in: har.response(entry)) == ["<redacted>"])
                #expect(!(har.request(entry)["url"] as? String ?? "").contains("ada:"))
            }
        }
    }

    @Test func redactionOff_isExplicit_andKeepsTheValues() async throws {
        try await withServer { server in
            try await withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent("plain.har")
                var configuration = SessionConfiguration.ephemeral
                configuration.harRecorder = try HARRecorder(fileURL: file, options: HARRecorder.Options(redactsSecrets: false))
                var request = URLRequest(url: server.url("/bytes/10"))
                request.setValue("Bearer visible", forHTTPHeaderField: "Authorization")
                _ = try await Session(configuration: configuration).data(for: request)
                let har = try HARFileCheck(file)
                #expect(har.headerValues("Authorization", in: har.request(har.entries[0])) == ["Bearer visible"])
            }
        }
    }

    @Test func aFullFile_isRotated_andBothStayValid() async throws {
        try await withServer { server in
            try await withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent("rotating.har")
                var configuration = SessionConfiguration.ephemeral
                let recorder = try HARRecorder(fileURL: file, options: HARRecorder.Options(maximumFileSize: 3000))
                configuration.harRecorder = recorder
                let session = Session(configuration: configuration)
                for index in 0..<4 {
                    _ = try await session.data(for: URLRequest(url: server.url("/bytes/\(500 + index)")))
                }
                #expect(recorder.rotatedFileURL.lastPathComponent == "rotating.1.har")
                let current = try HARFileCheck(file)
                let rotated = try HARFileCheck(recorder.rotatedFileURL)
                #expect(current.entries.count >= 1 && rotated.entries.count >= 1)
                #expect(current.entries.count + rotated.entries.count <= 4)
                #expect(current.content(current.entries.last!)["size"] as? Int == 503)
                #expect(recorder.writeFailures.isEmpty)
                recorder.close()
                _ = try await session.data(for: URLRequest(url: server.url("/bytes/1")))
                #expect(try HARFileCheck(file).entries.count == current.entries.count)
            }
        }
    }
}
