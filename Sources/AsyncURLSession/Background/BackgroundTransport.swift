internal import AgentWire
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a background session's tasks run: every hop goes to the transfer
/// agent (over the core's one seam for answers that are not libcurl's),
/// after the configuration's own local transport, if any, declined it.
struct BackgroundTransport: LocalTransport {
    let link: BackgroundLink
    let fallback: (any LocalTransport)?

    func responder(for request: LocalRequest) -> (any LocalResponder)? {
        if let fallback, fallback.isActive, let responder = fallback.responder(for: request) { return responder }
        return BackgroundResponder(link: link)
    }
}

/// One hop of a background task: handed to the agent (or, for a task an
/// earlier program started, found there), then followed through the
/// agent's updates: the response's head once it came, progress, and the
/// finished file, which a download task takes over (moved, not copied).
/// The agent follows redirects and retries after network errors itself.
struct BackgroundResponder: LocalResponder {
    let link: BackgroundLink

    func respond(to request: LocalRequest, through writer: LocalResponseWriter) async throws(URLError) {
        if let failure = link.lastingFailure { throw failure }
        guard let url = request.url, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw URLError.make(
                .unsupportedURL, url: nil, reason: "Background sessions load http and https URLs only.")
        }
        let task = request.taskIdentifier
        let updates = link.watch(task: task)
        defer { link.unwatch(task: task) }
        // After watching: a loss from now on is attached again by the link itself.
        try await link.reattachIfLost()
        let reconnected = link.takeReconnected(task: task)
        let transfer: Int64
        if let reconnected {
            transfer = reconnected
        } else {
            transfer = try await start(request)
        }
        var ended = false
        defer {
            // The task stopped first (cancelled, timed out): so does the agent.
            if !ended { Task { [link] in _ = try? await link.send(.cancel(id: transfer)) } }
        }
        var sentHead = false
        var bytesSent: Int64 = 0
        for await status in updates where status.id == transfer {
            // The agent sends an upload's body: its progress, forward only
            // (updates come in no set order; a retry sends it again).
            if let sent = status.bytesSent, sent > bytesSent {
                bytesSent = sent
                writer.reportBodySent(sent, expected: status.expectedBytesToSend ?? -1)
            }
            if !sentHead, let head = status.head ?? (status.transferPhase == .finished ? ResponseHeadRecord(statusCode: 200, headers: [], url: "") : nil) {
                // The agent followed the redirects: the response is from where they ended.
                try await writer.writeHead(
                    statusCode: head.statusCode, headerFields: head.headers.compactMap { $0.count == 2 ? (name: $0[0], value: $0[1]) : nil },
                    finalURL: head.url.isEmpty ? nil : URL(string: head.url))
                sentHead = true
                // A success came: the agent sent the whole body (its last
                // report of it may come after this update, or never).
                if (200..<300).contains(head.statusCode), let length = Self.bodyLength(request), length > bytesSent {
                    bytesSent = length
                    writer.reportBodySent(length, expected: length)
                }
            }
            switch status.transferPhase {
            case .finished:
                if let file = status.file {
                    try await writer.writeBody(contentsOf: URL(fileURLWithPath: file), length: status.bytesOnDisk)
                }
                ended = true
                _ = try? await link.send(.delivered(id: transfer))
                if reconnected != nil { link.handedOver(task: task) }
                return
            case .failed, .cancelled:
                ended = true
                _ = try? await link.send(.delivered(id: transfer))
                if reconnected != nil { link.handedOver(task: task) }
                let code = status.transferPhase == .cancelled ? .cancelled : (URLError.Code(rawValue: status.failureCode ?? URLError.Code.unknown.rawValue) ?? .unknown)
                throw URLError.make(code, url: nil, reason: status.failure ?? "The background transfer was cancelled.")
            case .queued, .running, .waitingToRetry, .delivered, nil:
                if sentHead { writer.reportBodyProgress(received: status.bytesOnDisk, expected: status.expectedBytes) }
            }
        }
        if Task.isCancelled { throw URLError(.cancelled) }
        throw link.failure ?? URLError.make(
            .backgroundSessionWasDisconnected, url: nil, reason: "The transfer agent stopped sending updates.")
    }

    /// The length of the body file an upload sends; nil for any other.
    private static func bodyLength(_ request: LocalRequest) -> Int64? {
        guard case .file(let file) = request.body.source,
            let size = try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber
        else { return nil }
        return size.int64Value
    }

    /// Hands the hop's request to the agent; the body must be a file.
    private func start(_ request: LocalRequest) async throws(URLError) -> Int64 {
        var bodyFile: String?
        switch request.body.source {
        case .none:
            break
        case .file(let file):
            bodyFile = file.path
        case .data(let data) where data.isEmpty:
            break
        case .data, .stream:
            throw URLError.make(
                .unsupportedURL, url: nil,
                reason: "Background sessions send request bodies from files only (the agent sends them again after a "
                    + "crash): write the body to a file and use uploadTask(with:fromFile:).")
        }
        // The agent's session asks for (and decodes) compressed bodies itself.
        let headers = (request.request.allHTTPHeaderFields ?? [:])
            .filter { $0.key.lowercased() != "accept-encoding" }
            .sorted { $0.key < $1.key }
            .map { [$0.key, $0.value] }
        let recorded = BackgroundRequest(
            method: request.httpMethod, url: request.url?.absoluteString ?? "", headers: headers, bodyFile: bodyFile,
            discretionary: link.isDiscretionary ? true : nil)
        let reply = try await link.send(
            .startDownload(session: link.identifier, task: request.taskIdentifier, request: recorded, destination: nil))
        switch reply {
        case .started(let id):
            return id
        case .refused(let reason):
            throw URLError.make(.cannotLoadFromNetwork, url: nil, reason: "The transfer agent refused the task: \(reason)")
        default:
            throw URLError.make(.cannotLoadFromNetwork, url: nil, reason: "The transfer agent answered something else than asked.")
        }
    }
}
