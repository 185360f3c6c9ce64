import AsyncURLSession

/// The async side of MIGRATION.md's step 2.
enum AsyncCalls {
    static func fetchStatus(of url: URL) async throws -> Int? {
        let (_, response) = try await Session.shared.data(from: url)
        return (response as? HTTPURLResponse)?.statusCode
    }

    static func download(
        _ url: URL, to destination: URL, progress: (Double) -> Void
    ) async throws {
        let task = Session.shared.downloadTask(with: url)
        task.resume()
        for try await event in task.events {
            switch event {
            case .downloadProgress(let step) where step.totalBytesExpected > 0:
                progress(Double(step.totalBytes) / Double(step.totalBytesExpected))
            case .downloaded(let file):
                try FileManager.default.moveItem(at: file, to: destination)
            default:
                break
            }
        }
    }

    static func fetchFollowingSameHostOnly(_ url: URL) async throws -> HTTPURLResponse? {
        let task = Session.shared.dataTask(with: url)
        task.resume()
        var response: HTTPURLResponse?
        for try await event in task.events {
            switch event {
            case .redirect(let decision):
                if decision.proposedRequest.url?.host == url.host { decision.follow() } else { decision.stop() }
            case .response(let head, _):
                response = head
            default:
                break
            }
        }
        return response
    }

    static func fetch(_ url: URL, user: String, password: String) async throws -> Data {
        let task = Session.shared.dataTask(with: url)
        task.resume()
        var body = Data()
        for try await event in task.events {
            switch event {
            case .challenge(let decision) where decision.previousFailureCount == 0:
                decision.useCredential(URLCredential(user: user, password: password, persistence: .forSession))
            case .challenge(let decision):
                decision.cancel()
            case .data(let chunk):
                body.append(chunk)
            default:
                break
            }
        }
        return body
    }
}
