import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Runs one `URLProtocol` instance for one hop: makes it with the canonical
/// request (the body read into `httpBody`), starts it, and writes what its
/// client reports as the hop's response. `stopLoading` follows once, when
/// the load ends or the task stops wanting it.
struct URLProtocolResponder: LocalResponder {
    let type: URLProtocol.Type
    /// The classic task the hop belongs to (the instance's `task`).
    let task: URLSessionTask?

    func respond(to request: LocalRequest, through writer: LocalResponseWriter) async throws(URLError) {
        var loaded = request.request
        let body = try await request.body.collect()
        if !body.isEmpty { loaded.httpBody = body }
        let client = ProtocolClientBridge()
        let instance = type.init(request: type.canonicalRequest(for: loaded), cachedResponse: nil, client: client)
        instance.task = task
        // Off the Swift pool: a legacy protocol may block in startLoading.
        DispatchQueue.global().async { instance.startLoading() }
        defer { DispatchQueue.global().async { instance.stopLoading() } }
        let url = request.url
        for await event in client.events {
            switch event {
            case .response(let response):
                try await writer.writeHead(statusCode: Self.status(of: response), headerFields: Self.fields(of: response))
            case .data(let data):
                if !writer.sentHead { try await writer.writeHead(statusCode: 200) }
                try await writer.writeBody(data)
            case .finished:
                if !writer.sentHead { try await writer.writeHead(statusCode: 200) }
                return
            case .failed(let error):
                throw Self.urlError(error, url: url)
            case .redirected(let newRequest, let response):
                guard !writer.sentHead else { return }
                // The redirect is the hop's response: the task's redirect
                // decision (and the delegate) sees it, and the next hop is
                // offered to the protocol classes again.
                var fields = Self.fields(of: response).filter { $0.name.lowercased() != "location" }
                fields.append((name: "Location", value: newRequest.url?.absoluteString ?? ""))
                let status = (response as? HTTPURLResponse).map(\.statusCode).flatMap { (300...399).contains($0) ? $0 : nil } ?? 302
                try await writer.writeHead(statusCode: status, headerFields: fields)
                return
            case .cachedResponseIsValid(let cached):
                if !writer.sentHead {
                    try await writer.writeHead(statusCode: Self.status(of: cached.response), headerFields: Self.fields(of: cached.response))
                }
                try await writer.writeBody(cached.data)
                return
            case .challenge(let challenge):
                // Asked of the task's handling as a server's 401 would be
                // (the delegate's challenge methods, session-level first
                // for connection-level methods); the answer goes to the
                // challenge's sender, which is how the protocol learns it.
                let answer = try await writer.challenge(
                    protectionSpace: challenge.protectionSpace, proposedCredential: challenge.proposedCredential,
                    previousFailureCount: challenge.previousFailureCount,
                    failureResponse: challenge.failureResponse as? HTTPURLResponse)
                let reply = ChallengeReply(challenge: challenge, answer: answer)
                DispatchQueue.global().async { reply.deliver() }
            }
        }
        throw URLError(.cancelled)
    }

    private static func status(of response: URLResponse) -> Int {
        (response as? HTTPURLResponse)?.statusCode ?? 200
    }

    private static func fields(of response: URLResponse) -> [(name: String, value: String)] {
        if let http = response as? HTTPURLResponse {
            return http.allHeaderFields.compactMap { key, value in
                guard let name = key as? String else { return nil }
                return (name: name, value: "\(value)")
            }.sorted { $0.name < $1.name }
        }
        var fields: [(name: String, value: String)] = []
        if let type = response.mimeType {
            fields.append((name: "Content-Type", value: type + (response.textEncodingName.map { "; charset=\($0)" } ?? "")))
        }
        if response.expectedContentLength >= 0 {
            fields.append((name: "Content-Length", value: String(response.expectedContentLength)))
        }
        return fields
    }

    private static func urlError(_ error: any Error, url: URL?) -> URLError {
        if let error = error as? URLError { return error }
        let nsError = error as NSError
        var info: [String: Any] = [NSLocalizedDescriptionKey: nsError.localizedDescription, NSUnderlyingErrorKey: nsError]
        if let url { info[NSURLErrorFailingURLErrorKey] = url }
        let code = nsError.domain == NSURLErrorDomain ? URLError.Code(rawValue: nsError.code) ?? .unknown : .unknown
        return URLError(code, userInfo: info)
    }
}

/// A challenge's answer on its way to the challenge's sender (the
/// protocol, as a rule), off the responder's task: a legacy sender may
/// block, or call its client back at once.
/// `@unchecked`: the challenge is immutable once made, and its sender is
/// called once, from one thread.
private struct ChallengeReply: @unchecked Sendable {
    let challenge: URLAuthenticationChallenge
    let answer: ChallengeDecision.Answer

    func deliver() {
        guard let sender = challenge.sender else { return }
        switch answer {
        case .useCredential(let credential): sender.use(credential, for: challenge)
        case .performDefaultHandling: sender.performDefaultHandling(for: challenge)
        case .cancel: sender.cancel(challenge)
        case .rejectProtectionSpace: sender.rejectProtectionSpaceAndContinue(with: challenge)
        }
    }
}

/// The client a `URLProtocol` instance reports to: its calls, from any
/// thread, queue up in order for the responder.
final class ProtocolClientBridge: NSObject, URLProtocolClient, Sendable {
    enum Event: Sendable {
        case response(URLResponse)
        case data(Data)
        case finished
        case failed(any Error)
        case redirected(URLRequest, URLResponse)
        case cachedResponseIsValid(CachedURLResponse)
        case challenge(URLAuthenticationChallenge)
    }

    let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation

    override init() {
        (events, continuation) = AsyncStream.makeStream(of: Event.self)
        super.init()
    }

    private func send(_ event: Event, ends: Bool = false) {
        continuation.yield(event)
        if ends { continuation.finish() }
    }

    func urlProtocol(_ protocol: URLProtocol, wasRedirectedTo request: URLRequest, redirectResponse: URLResponse) {
        send(.redirected(request, redirectResponse), ends: true)
    }

    func urlProtocol(_ protocol: URLProtocol, cachedResponseIsValid cachedResponse: CachedURLResponse) {
        send(.cachedResponseIsValid(cachedResponse), ends: true)
    }

    func urlProtocol(_ protocol: URLProtocol, didReceive response: URLResponse, cacheStoragePolicy policy: URLCache.StoragePolicy) {
        send(.response(response))
    }

    func urlProtocol(_ protocol: URLProtocol, didLoad data: Data) {
        send(.data(data))
    }

    func urlProtocolDidFinishLoading(_ protocol: URLProtocol) {
        send(.finished, ends: true)
    }

    func urlProtocol(_ protocol: URLProtocol, didFailWithError error: any Error) {
        send(.failed(error), ends: true)
    }

    func urlProtocol(_ protocol: URLProtocol, didReceive challenge: URLAuthenticationChallenge) {
        send(.challenge(challenge))
    }

    func urlProtocol(_ protocol: URLProtocol, didCancel challenge: URLAuthenticationChallenge) {}
}
