import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request/response exchange of a task ("hop"): the first request, then
/// one per followed redirect or authentication retry. It decides, for each
/// response head, whether the consumer sees it now or whether it is held back
/// because a decision comes first (redirect, challenge), and where body bytes
/// go meanwhile. A value type without side effects.
struct HopState {
    /// Why a response is held back.
    enum HeldKind {
        /// A 3xx with a usable Location: a redirect decision follows at the hop's end.
        case redirect(proposed: URLRequest, isDowngrade: Bool)
        /// A 401/407 to a request sent without credentials: a challenge follows.
        case challenge
        /// A 401/407 to a request sent WITH credentials: libcurl may still be
        /// running its own exchange (Digest, NTLM) inside the transfer, so this
        /// head is provisional until body bytes or the end show it is final.
        case provisionalAuthFailure
        /// A status the task's retry policy answers with another attempt
        /// (429, 503...): the retry decision follows at the hop's end.
        case retryableStatus
    }

    struct Held {
        var response: HTTPURLResponse
        var kind: HeldKind
        var body = Data()
        /// Made from a proxy's 407 to CONNECT, which libcurl reports as a
        /// failure: no response to deliver if nobody answers, the error is.
        var connectFailure: URLError?
    }

    /// The hop's request. Its URL moves when a local responder says the
    /// exchange ended elsewhere (the background agent follows redirects
    /// itself): the response, and `currentRequest`, name where it ended.
    private(set) var request: URLRequest
    let credential: HopCredential?
    /// The credential sent to the proxy, if any (an answer's, or the proxy
    /// configuration's).
    let proxyCredential: HopCredential?
    private(set) var held: Held?
    /// The response cache's stage around this hop's transport; nil when
    /// the hop does nothing with the cache. The stage holds the task, so
    /// the task's end lets go of it (`leaveCacheStage`).
    private(set) var cacheStage: CacheStage?
    /// Body of a held response is kept up to this size; a larger one is not
    /// followed or retried but delivered as the response, so nothing is lost.
    static let heldBodyLimit = 1 << 20

    init(
        request: URLRequest, credential: HopCredential?, proxyCredential: HopCredential? = nil,
        cacheStage: CacheStage? = nil
    ) {
        self.request = request
        self.credential = credential
        self.proxyCredential = proxyCredential
        self.cacheStage = cacheStage
    }

    /// The task ended: its cache stage has nothing more to do.
    mutating func leaveCacheStage() {
        cacheStage = nil
    }

    /// The exchange ended at `url`, not at the URL it was sent to.
    mutating func moved(to url: URL) {
        request.url = url
    }

    /// A proxy's 407 to CONNECT, held as a forwarded 407 would be.
    mutating func holdConnectRefusal(methods: [String], error: URLError) {
        guard let url = request.url else { return }
        let fields = methods.isEmpty ? [:] : ["Proxy-Authenticate": methods.joined(separator: ", ")]
        guard let response = HTTPURLResponse(url: url, statusCode: 407, httpVersion: "HTTP/1.1", headerFields: fields)
        else { return }
        held = Held(response: response, kind: .challenge, connectFailure: error)
    }

    enum HeadVerdict {
        case deliver(ResponseSource)
        case hold
    }

    /// - Parameter sensitive: whether a (lowercased) header name must not
    ///   follow a redirect to another origin (asked only for a redirect).
    /// Whether a head of this status may be held back (a redirect or an
    /// authentication challenge): only then does `receivedHead` build
    /// Foundation's response, which must not happen under the task's lock.
    static func mayHold(status: Int) -> Bool {
        status == 401 || status == 407 || RedirectPolicy.mayRedirect(status)
    }

    /// `receivedHead` for a status that is never held (`mayHold` false):
    /// cheap enough to decide under the lock that checked the hop.
    mutating func receivedUnholdableHead(_ source: ResponseSource) -> HeadVerdict {
        held = nil
        return .deliver(source)
    }

    /// - Parameter retryable: the statuses the task's retry policy answers
    ///   with another attempt while it has attempts left (none without one).
    mutating func receivedHead(
        _ source: ResponseSource, redirectsAsFoundationNetworking: Bool = false, retryable: Set<Int> = [],
        sensitive: (String) -> Bool
    ) -> HeadVerdict {
        held = nil
        let status = source.statusCode
        if retryable.contains(status), let response = source.response {
            held = Held(response: response, kind: .retryableStatus)
            return .hold
        }
        // Only these statuses can be held back: any other one is delivered
        // without building Foundation's response here.
        guard Self.mayHold(status: status), let response = source.response
        else { return .deliver(source) }
        if status == 401 || status == 407 {
            if (status == 407 ? proxyCredential : credential) != nil {
                held = Held(response: response, kind: .provisionalAuthFailure)
                return .hold
            }
            if !Self.challenges(in: response).isEmpty {
                held = Held(response: response, kind: .challenge)
                return .hold
            }
            return .deliver(source)
        }
        if case .redirect(let proposed, let isDowngrade) = RedirectPolicy.evaluate(
            response: response, request: request, asFoundationNetworking: redirectsAsFoundationNetworking,
            sensitive: sensitive)
        {
            held = Held(response: response, kind: .redirect(proposed: proposed, isDowngrade: isDowngrade))
            return .hold
        }
        return .deliver(source)
    }

    enum BodyVerdict {
        /// Not held: the bytes are the response body.
        case deliver
        /// Kept with the held response.
        case kept
        /// The held response turned out to be the result (its body is too
        /// large to hold, or libcurl wrote the body of a 401 it will not
        /// retry): deliver it and what was kept, then these bytes.
        case releaseHeld(HTTPURLResponse, Data)
    }

    mutating func receivedBody(_ bytes: UnsafeRawBufferPointer) -> BodyVerdict {
        guard var current = held else { return .deliver }
        if case .provisionalAuthFailure = current.kind {
            // libcurl writes a 401's body only when it is the final answer.
            current.kind = .challenge
        }
        if current.body.count + bytes.count > Self.heldBodyLimit {
            held = nil
            return .releaseHeld(current.response, current.body)
        }
        current.body.append(contentsOf: bytes)
        held = current
        return .kept
    }

    /// The held response was published as the result.
    mutating func releaseHeld() {
        held = nil
    }

    /// The challenges a 401 (WWW-Authenticate) or 407 (Proxy-Authenticate) offers.
    static func challenges(in response: HTTPURLResponse) -> [AuthenticationChallenge] {
        let field = response.statusCode == 407 ? "Proxy-Authenticate" : "WWW-Authenticate"
        guard let value = response.value(forHTTPHeaderField: field) else { return [] }
        return AuthenticationChallenge.parse([value])
    }
}
