import AgentWire
import AsyncURLSession
import Foundation
import LoopbackServer
import Testing
import TestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// What a background task says as a foreground one would (issue 44 item
/// 7): the response is from where the agent's redirects ended, an upload
/// reports the bytes the agent sent, and a task outlives its agent (killed:
/// the session attaches to the next one by itself).
@Suite struct BackgroundAgentRulesTests {
    @Test func aRedirectedDownload_hasTheResponseOfWhereTheRedirectsEnded() async throws {
        try await withServer(timeLimit: 90) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            defer { sandbox.stopAgent() }
            let task = Session(configuration: sandbox.configuration("moved")).downloadTask(with: server.url("/redirect/2"))
            task.resume()
            var response: HTTPURLResponse?
            var file: Data?
            for try await event in task.events {
                switch event {
                case .response(let head, _): response = head
                case .downloaded(let url): file = try Data(contentsOf: url)
                default: break
                }
            }
            #expect(file == Data("done".utf8))
            #expect(response?.url == server.url("/redirect/0"))
            #expect(task.response?.url == server.url("/redirect/0"))
            #expect(task.currentRequest?.url == server.url("/redirect/0"))
            #expect(task.originalRequest?.url == server.url("/redirect/2"))
        }
    }

    @Test func anUploadFromAFile_reportsTheBytesTheAgentSent() async throws {
        try await withServer(timeLimit: 90) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            defer { sandbox.stopAgent() }
            let body = sandbox.runtime.appendingPathComponent("upload.bin")
            try LoopbackServer.patternBody(count: 3_000_000).write(to: body)
            let task = Session(configuration: sandbox.configuration("sends"))
                .uploadTask(with: URLRequest(url: server.url("/echo")), fromFile: body)
            task.resume()
            var sent: [TransferProgress] = []
            var status: Int?
            for try await event in task.events {
                switch event {
                case .uploadProgress(let step): sent.append(step)
                case .response(let response, _): status = response.statusCode
                default: break
                }
            }
            #expect(status == 200)
            #expect(!sent.isEmpty)
            #expect(sent.last?.totalBytes == 3_000_000, "\(sent)")
            #expect(sent.last?.totalBytesExpected == 3_000_000, "\(sent)")
            #expect(sent.map(\.totalBytes) == sent.map(\.totalBytes).sorted())
        }
    }
}
