import AgentWire
import AsyncURLSession
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
        default:
            throw FetchError("the agent answered something else than asked")
        }
    }

    /// `--session ID`: a download in background session `identifier`,
    /// waited for with a progress bar; without a request, the downloads an
    /// earlier fetch of that session left (killed, interrupted) are taken
    /// up, the first to `output`, any other to `output.N`.
    static func runInSession(_ identifier: String, request: URLRequest?, output: String, silent: Bool) async throws {
        var configuration = SessionConfiguration.background(identifier: identifier)
        configuration.backgroundAgentPath = agentExecutable
        let session = Session(configuration: configuration)
        do {
            if let request {
                let task = session.downloadTask(with: request)
                task.resume()
                try await DownloadWriter(destination: output, silent: silent).run(task)
                return
            }
            var count = 0
            for try await event in session.backgroundEvents {
                guard case .reconnected(let task) = event else { continue }
                let destination = count == 0 ? output : "\(output).\(count)"
                count += 1
                if !silent { print("taking up task \(task.taskIdentifier): \(task.originalRequest?.url?.absoluteString ?? "-")") }
                try await DownloadWriter(destination: destination, silent: silent).run(task)
            }
            if count == 0 { throw FetchError("background session \"\(identifier)\" has no download to take up") }
        } catch let error as FetchError {
            throw error
        } catch {
            throw FetchError(describing: error)
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
        default:
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
