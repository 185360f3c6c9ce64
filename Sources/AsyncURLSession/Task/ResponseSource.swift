internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A final response head whose Foundation `HTTPURLResponse` is built on first
/// use, once, and then shared (every reader sees the same object).
///
/// Why: corelibs' `HTTPURLResponse.init` canonicalises every field name
/// through NSString (`capitalized`, `caseInsensitiveCompare`) and parses
/// Content-Type; it measured about 28 µs per response, the costliest step of
/// a small request, and it ran on the engine thread, which serves every
/// transfer. The pipeline itself only needs the status code, the expected
/// length and, for a few statuses, a header or two, all cheap to read from
/// the head. So `data(for:)` builds the object on the consumer's thread, and
/// the engine thread only builds it for an events consumer or a status that
/// needs a decision (3xx, 401, 407). A head identical to a recent one gets
/// that one's object instead of a new build (see `ResponseInterning`).
final class ResponseSource: Sendable {
    let statusCode: Int
    /// As `HTTPURLResponse.expectedContentLength`: Content-Length, or -1.
    let expectedContentLength: Int64
    /// Whether Content-Type starts with "multipart/": only then is it worth
    /// reading as a String (see `TaskCore.startMultipart`).
    let contentTypeIsMultipart: Bool
    private let head: ResponseHead?
    private let url: URL
    private let built: LazyResponse
    private let interning: ResponseInterning

    init(head: ResponseHead, url: URL, interning: ResponseInterning = .shared) {
        self.head = head
        self.url = url
        self.interning = interning
        statusCode = head.statusCode
        // HTTPURLResponse joins repeated fields with ", ", which no longer
        // reads as a number: a repeated Content-Length is unknown there too.
        expectedContentLength = head.fields.count(named: "Content-Length") == 1 ? head.contentLength ?? -1 : -1
        contentTypeIsMultipart = head.contentTypeIsMultipart
        built = LazyResponse()
    }

    /// Wraps a response built already (a held 3xx/401/407 that became the result).
    init(_ response: HTTPURLResponse) {
        head = nil
        url = response.url ?? URL(fileURLWithPath: "/")
        statusCode = response.statusCode
        expectedContentLength = response.expectedContentLength
        let contentType = response.value(forHTTPHeaderField: "Content-Type") ?? ""
        contentTypeIsMultipart = contentType.utf8.count >= 10
            && String(contentType.utf8.prefix(10))?.equalsIgnoringASCIICase("multipart/") == true
        built = LazyResponse(response)
        interning = .shared
    }

    /// Foundation's response; built here on first use. Never call it under
    /// the task's lock on the engine thread: building is the slow part.
    var response: HTTPURLResponse? {
        if let existing = built.value { return existing }
        guard let head, let made = interning.response(for: head, url: url) else { return nil }
        // Two threads may build at once; the first stored wins so that every
        // reader gets the same object.
        return built.store(made)
    }

    /// A field's value as `HTTPURLResponse.value(forHTTPHeaderField:)` gives
    /// it (repeated fields joined with ", "), without building the response.
    func value(forHTTPHeaderField name: String) -> String? {
        guard let head else { return built.value?.value(forHTTPHeaderField: name) }
        return head.fields.value(named: name)
    }
}
