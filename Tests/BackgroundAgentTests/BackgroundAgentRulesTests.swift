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

    /// The agent is killed (SIGKILL) mid-download, the server stalling
    /// after 1.5 of 3 MB so that nothing ends on its own: the session
    /// attaches to the next agent by itself (which takes the transfer up
    /// from its journal with Range, served whole), and the same task gets
    /// the whole file.
    @Test func aTask_outlivesItsAgent_killedMidTransfer() async throws {
        try await withServer(timeLimit: 120) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            defer { sandbox.stopAgent() }
            let task = Session(configuration: sandbox.configuration("survives"))
                .downloadTask(with: server.url("/range/3000000?stallAfter=1500000"))
            task.resume()
            let client = AgentClient(folder: AgentFolder(url: sandbox.folder), agentExecutable: nil)
            var killed: pid_t = 0
            var file: Data?
            for try await event in task.events {
                switch event {
                case .downloadProgress(let step) where killed == 0 && step.totalBytes >= 1 << 20:
                    if case .status(let agent, _) = try client.send(.status, timeout: 10), agent > 0 {
                        kill(agent, SIGKILL)
                        killed = agent
                    }
                case .downloaded(let url):
                    file = try Data(contentsOf: url)
                default:
                    break
                }
            }
            #expect(killed > 0)
            #expect(file == LoopbackServer.patternBody(count: 3_000_000))
            if case .status(let agent, _) = try client.send(.status, timeout: 10) { #expect(agent != killed) }
        }
    }

    /// As above, but no next agent can start (its folder is made open to
    /// others, which the client refuses): after its bounded attempts the
    /// task fails saying what happened and what to do; once the folder is
    /// fixed, the same session's next task runs (it attaches again).
    @Test func aTaskWhoseAgentCannotStartAgain_failsSayingWhy_andTheNextTaskAttachesAgain() async throws {
        try await withServer(timeLimit: 120) { server in
            let sandbox = try AgentSandbox()
            defer { sandbox.remove() }
            defer { sandbox.stopAgent() }
            let session = Session(configuration: sandbox.configuration("stranded"))
            let task = session.downloadTask(with: server.url("/range/3000000?stallAfter=1500000"))
            task.resume()
            let client = AgentClient(folder: AgentFolder(url: sandbox.folder), agentExecutable: nil)
            var killed: pid_t = 0
            var failure: URLError?
            do {
                for try await event in task.events {
                    if case .downloadProgress(let step) = event, killed == 0, step.totalBytes >= 1 << 20,
                        case .status(let agent, _) = try client.send(.status, timeout: 10), agent > 0
                    {
                        chmod(sandbox.folder.path, 0o755)
                        kill(agent, SIGKILL)
                        killed = agent
                    }
                }
            } catch let error as URLError {
                failure = error
            }
            chmod(sandbox.folder.path, 0o700)
            #expect(killed > 0)
            #expect(failure?.code == .backgroundSessionWasDisconnected)
            let message = failure?.localizedDescription ?? ""
            #expect(message.contains("went away and could not be started again"), "\(message)")
            #expect(message.contains("open to other users"), "\(message)")
            let next = session.downloadTask(with: server.url("/range/200000"))
            next.resume()
            var file: Data?
            for try await event in next.events {
                if case .downloaded(let url) = event { file = try Data(contentsOf: url) }
            }
            #expect(file == LoopbackServer.patternBody(count: 200_000))
        }
    }
}
