import AsyncURLSession
import Foundation
import LoopbackServer
import Testing

@testable import AsyncURLSession

@Suite struct MultipartReplaceTests {
    @Test func eachPart_isAResponseFollowedByItsBytes() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration())
                .dataTask(with: server.url("/multipart-replace?parts=3&size=1000&interval=20"))
            task.resume()
            var parts: [(type: String?, body: Data)] = []
            for try await event in task.events {
                switch event {
                case .response(let response, _):
                    parts.append((response.value(forHTTPHeaderField: "Content-Type"), Data()))
                case .data(let chunk):
                    parts[parts.count - 1].body.append(chunk)
                default: break
                }
            }
            #expect(parts.count == 3)
            #expect(parts.allSatisfy { $0.type == "text/plain" })
            #expect(parts.allSatisfy { $0.body == LoopbackServer.patternBody(count: 1000) })
        }
    }

    /// Interval 0: every part has arrived (the transfer ended) before the
    /// consumer answers; 20 ms: the next part is still on its way.
    @Test(arguments: [0, 20])
    func cancellingAPartsDecision_endsTheTaskWithCancelled(intervalMilliseconds: Int) async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration())
                .dataTask(with: server.url("/multipart-replace?parts=3&size=1000&interval=\(intervalMilliseconds)"))
            task.resume()
            var responses = 0
            var failure: URLError?
            do {
                for try await event in task.events {
                    guard case .response(_, let decision) = event else { continue }
                    responses += 1
                    if responses == 2 { decision.cancel() }
                }
            } catch let error as URLError {
                failure = error
            }
            #expect(failure?.code == .cancelled)
            #expect(responses == 2, "no part after the cancelled one")
        }
    }

    @Test func parser_handlesAnySplitOfTheBytes() {
        let body = Data("preamble\r\n--b\r\nContent-Type: a\r\n\r\nONE\r\n--b\r\n\r\nTWO\r\n--b--\r\nepilogue".utf8)
        for chunkSize in [1, 2, 3, 7, body.count] {
            var parser = MultipartReplaceParser(contentType: "multipart/x-mixed-replace; boundary=\"b\"")!
            var outputs: [MultipartReplaceParser.Output] = []
            var offset = 0
            while offset < body.count {
                let piece = body[offset..<min(offset + chunkSize, body.count)]
                outputs += piece.withUnsafeBytes { parser.feed($0) }
                offset += chunkSize
            }
            var bodies: [String] = []
            var heads: [[MultipartReplaceParser.HeaderField]] = []
            for output in outputs {
                switch output {
                case .partHead(let fields):
                    heads.append(fields)
                    bodies.append("")
                case .body(let data): bodies[bodies.count - 1] += String(decoding: data, as: UTF8.self)
                case .end: break
                }
            }
            #expect(bodies == ["ONE", "TWO"], "chunk size \(chunkSize)")
            #expect(heads.first == [.init(name: "Content-Type", value: "a")])
            #expect(outputs.last == .end)
        }
    }

    @Test func parser_refusesOtherContentTypes() {
        #expect(MultipartReplaceParser(contentType: "text/plain") == nil)
        #expect(MultipartReplaceParser(contentType: "multipart/x-mixed-replace") == nil)
        #expect(MultipartReplaceParser(contentType: "multipart/mixed; boundary=x") == nil)
    }

    /// The task's part of it, without a network: each part head becomes a
    /// response with the outer URL and status and the part's own headers.
    @Test func multipartState_turnsEachPartHeadIntoAResponse() throws {
        let url = try #require(URL(string: "http://127.0.0.1/camera"))
        let outer = try #require(HTTPURLResponse(
            url: url, statusCode: 200, httpVersion: "HTTP/1.1",
            headerFields: ["Content-Type": "multipart/x-mixed-replace; boundary=b"]))
        let parser = try #require(MultipartReplaceParser(contentType: "multipart/x-mixed-replace; boundary=b"))
        var state = MultipartState(parser: parser, outer: outer)
        let body = Data("--b\r\nContent-Type: image/a\r\n\r\nONE\r\n--b\r\nContent-Type: image/b\r\n\r\nTWO\r\n--b--\r\n".utf8)
        let parts = body.withUnsafeBytes { state.feed($0) }
        var seen: [String] = []
        for part in parts {
            switch part {
            case .response(let response):
                #expect(response.url == url)
                #expect(response.statusCode == 200)
                seen.append("response \(response.value(forHTTPHeaderField: "Content-Type") ?? "-")")
            case .body(let data):
                seen.append("body \(String(decoding: data, as: UTF8.self))")
            }
        }
        #expect(seen == ["response image/a", "body ONE", "response image/b", "body TWO"])
    }
}
