import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import OpenAPIRuntime

/// A `ClientTransport` for swift-openapi-generator clients, on this
/// library's `Session`:
///
///     let client = Client(serverURL: url, transport: AsyncURLSessionTransport())
///
/// Request bodies are streamed as the client produces them (with their
/// Content-Length when known) and response bodies stream back with the
/// session's backpressure: a caller that stops reading the body pauses the
/// transfer. Redirects, challenges and the response decision take the
/// session's handling (its delegate, else the defaults). A body that must
/// be sent again (a 307, or a challenge answered with a credential) must be
/// one the client can iterate more than once.
public struct AsyncURLSessionTransport: ClientTransport {
    public struct Configuration: Sendable {
        /// The session the requests run in.
        public var session: Session

        public init(session: Session = .shared) {
            self.session = session
        }
    }

    public let configuration: Configuration

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    public func send(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let urlRequest = try Self.urlRequest(for: request, body: body, baseURL: baseURL)
        let session = configuration.session
        let task: SessionTask
        if let body {
            if let data = try await Self.inMemoryBytes(of: body) {
                task = session.uploadTask(with: urlRequest, from: data)
                task.resume()
                return try await Self.response(of: task, body: nil, method: request.method)
            }
            task = session.uploadTask(withStreamedRequest: urlRequest)
            task.resume()
            return try await Self.response(of: task, body: body, method: request.method)
        }
        task = session.dataTask(with: urlRequest)
        task.resume()
        return try await Self.response(of: task, body: nil, method: request.method)
    }

    /// Bodies up to this size that the caller already holds in memory are
    /// sent as one `Data` rather than streamed.
    static let inMemoryBodyLimit: Int64 = 8 << 20

    /// The bytes of a body the client built from memory (`HTTPBody(Data)`,
    /// a string, an array: known length, iterable again), so that libcurl
    /// reads them in place: streamed through the task's body pipe, a 1 MiB
    /// POST ran at half the speed of the same POST from `Data` (W4, 16 at
    /// once), and a re-send (307, challenge) needs no second iteration.
    /// Nil for a live stream (single iteration or unknown length), which is
    /// streamed as it is produced, and for bodies past the limit.
    static func inMemoryBytes(of body: HTTPBody) async throws -> Data? {
        guard body.iterationBehavior == .multiple, case .known(let length) = body.length,
              length <= inMemoryBodyLimit
        else { return nil }
        return try await Data(collecting: body, upTo: Int(length))
    }

    /// The URL is the base URL with the request's path (and query) appended.
    static func urlRequest(for request: HTTPRequest, body: HTTPBody?, baseURL: URL) throws -> URLRequest {
        var base = baseURL.absoluteString
        if base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base + (request.path ?? "")) else {
            throw URLError(.badURL, userInfo: [
                NSLocalizedDescriptionKey: "Cannot make a URL of \(base) and \(request.path ?? "")."
            ])
        }
        var urlRequest = URLRequest(url: url)
        // FoundationNetworking's request normalises the method and searches
        // its fields on every setter call: GET is the default already, and
        // the fields go in as one dictionary (a tenth of the transport's
        // CPU per small request went to those setters).
        if request.method != .get {
            urlRequest.httpMethod = request.method.rawValue
        }
        var fields: [String: String] = [:]
        for field in request.headerFields {
            let name = field.name.canonicalName
            if let earlier = fields[name] {
                // Repeated fields combine as on the wire (RFC 9110 5.3);
                // cookies with "; " (RFC 6265 5.4).
                fields[name] = earlier + (field.name == .cookie ? "; " : ", ") + field.value
            } else {
                fields[name] = field.value
            }
        }
        if let body, case .known(let length) = body.length, fields[HTTPField.Name.contentLength.canonicalName] == nil {
            fields[HTTPField.Name.contentLength.canonicalName] = String(length)
        }
        if !fields.isEmpty {
            urlRequest.allHTTPHeaderFields = fields
        }
        return urlRequest
    }

    /// Pulls `task`'s events up to its response (providing `body` when the
    /// task asks for it); the rest of its body streams through the result.
    static func response(of task: SessionTask, body: HTTPBody?, method: HTTPRequest.Method) async throws
        -> (HTTPResponse, HTTPBody?)
    {
        // Pulled without `events`: leaving that loop at the response would
        // cancel the task (an abandoned events stream does), and the body
        // is still to come.
        while let event = try await task.nextEvent() {
            switch event {
            case .needBodyStream(let decision):
                guard let body else {
                    decision.refuse()
                    continue
                }
                decision.provide(body.map { Data($0) })
            case .response(let response, _):
                var fields = HTTPFields()
                for (name, value) in response.allHeaderFields {
                    guard let text = name as? String, let name = HTTPField.Name(text) else { continue }
                    fields.append(HTTPField(name: name, value: "\(value)"))
                }
                let head = HTTPResponse(status: .init(code: response.statusCode), headerFields: fields)
                if method == .head || response.statusCode == 204 || response.statusCode == 304 {
                    return (head, nil)
                }
                let length: HTTPBody.Length = response.expectedContentLength >= 0
                    ? .known(response.expectedContentLength) : .unknown
                // The body holds the task: dropped unread, it takes the task
                // with it, which cancels the transfer (SessionTask's deinit)
                // instead of leaving it paused on its connection.
                return (head, HTTPBody(AsyncBytes(task: task).chunks, length: length, iterationBehavior: .single))
            default:
                // Decisions not answered here take their defaults (the
                // session's delegate has been asked already).
                continue
            }
        }
        throw URLError(.badServerResponse, userInfo: [
            NSLocalizedDescriptionKey: "The transfer ended without a response.",
        ])
    }
}

