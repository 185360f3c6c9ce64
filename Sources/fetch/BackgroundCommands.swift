import AgentWire
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `fetch --background` and `--background-status`: downloads handed to the
/// background agent, which goes on after fetch exits (and after a crash or
/// a kill of either, from the bytes on disk).
enum BackgroundCommands {
    /// The agent program installed beside fetch.
    static var agentExecutable: String {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("asyncurlsession-agent").path
    }

    static var client: AgentClient { AgentClient(agentExecutable: agentExecutable) }

    /// Hands the download of `request` to the agent, which moves the file to
    /// `output` (default: the URL's last path component, in this folder).
    static func start(_ request: URLRequest, output: String?) throws {
        guard let url = request.url else { throw FetchError("no URL to download") }
        let name = url.lastPathComponent.isEmpty || url.lastPathComponent == "/" ? "download" : url.lastPathComponent
        let destination = URL(fileURLWithPath: output ?? name).standardizedFileURL.path
        let headers = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }.map { [$0.key, $0.value] }
        let described = BackgroundRequest(method: request.httpMethod ?? "GET", url: url.absoluteString, headers: headers)
        let reply = try ask(.startDownload(
            session: "fetch", task: Int.random(in: 1..<Int.max), request: described, destination: destination))
        switch reply {
        case .started(let id):
            print("transfer \(id) started in the background: \(url.absoluteString) -> \(destination)")
            print("follow it with: fetch --background-status")
        case .refused(let reason):
            throw FetchError("the agent refused the download: \(reason)")
        case .status:
            throw FetchError("the agent answered something else than asked")
        }
    }

    /// Prints every background transfer of this user, with progress.
    static func printStatus() throws {
        switch try ask(.status) {
        case .status(let agent, let transfers):
            print("agent \(agent), \(client.folder.url.path)")
            if transfers.isEmpty { print("no background transfers") }
            for transfer in transfers {
                print(line(transfer))
            }
        case .refused(let reason):
            throw FetchError("the agent refused: \(reason)")
        case .started:
            throw FetchError("the agent answered something else than asked")
        }
    }

    static func line(_ transfer: BackgroundTransferStatus) -> String {
        let progress: String
        if transfer.expectedBytes > 0 {
            let percent = Double(transfer.bytesOnDisk) * 100 / Double(transfer.expectedBytes)
            progress = "\(transfer.bytesOnDisk)/\(transfer.expectedBytes) bytes (\(String(format: "%.0f", percent))%)"
        } else {
            progress = "\(transfer.bytesOnDisk) bytes"
        }
        var text = "#\(transfer.id) \(transfer.phase) \(progress) \(transfer.url)"
        if let file = transfer.file, transfer.phase == "delivered" || transfer.phase == "finished" { text += " -> \(file)" }
        if let failure = transfer.failure, transfer.phase != "delivered", transfer.phase != "finished" {
            text += " (\(failure))"
        }
        return text
    }

    private static func ask(_ request: AgentRequest) throws -> AgentReply {
        do {
            return try client.send(request)
        } catch {
            throw FetchError("cannot talk to the background agent: \(error.description)")
        }
    }
}
