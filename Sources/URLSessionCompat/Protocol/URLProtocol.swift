import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Foundation's `URLProtocol`, for this adapter's sessions: a subclass that
/// `canInit(with:)` a request answers it instead of the network, through
/// its `client`. Listed in `URLSessionConfiguration.protocolClasses`
/// (consulted first, in order) or registered with `registerClass` (then
/// consulted, the last registered first), for every session of the process.
///
/// Shadows FoundationNetworking's class in files that import URLSessionCompat,
/// so legacy stubs (`class Stub: URLProtocol`) compile unchanged and answer
/// this adapter's requests. Every `URLProtocolClient` call is honoured: a
/// response with its cache policy, data, finish, failure, a redirect (which
/// goes through the redirect delegate, then the next hop is offered to the
/// classes again) and a cached response; see `URLProtocolClient` for
/// authentication challenges.
///
/// `startLoading` runs on a thread of the adapter's (not the delegate
/// queue), `stopLoading` once the load ends or is cancelled; client calls
/// may come from any thread.
open class URLProtocol: NSObject, @unchecked Sendable {
    // @unchecked: `request`, `cachedResponse` and `client` are set in init and
    // never changed; `task` is written once before `startLoading`. A
    // subclass's own state is the subclass's to guard, as in Foundation.

    /// The request this instance loads (after `canonicalRequest(for:)`).
    open private(set) var request: URLRequest
    /// A cached response, when the session's cache holds one for the request.
    open private(set) var cachedResponse: CachedURLResponse?
    /// Where the instance reports what it loads.
    open private(set) var client: (any URLProtocolClient)?
    /// The task this instance loads for, when there is one.
    open internal(set) var task: URLSessionTask?

    public required init(request: URLRequest, cachedResponse: CachedURLResponse?, client: (any URLProtocolClient)?) {
        self.request = request
        self.cachedResponse = cachedResponse
        self.client = client
        super.init()
    }

    public convenience init(task: URLSessionTask, cachedResponse: CachedURLResponse?, client: (any URLProtocolClient)?) {
        self.init(request: task.currentRequest ?? URLRequest(url: URL(string: "about:blank")!), cachedResponse: cachedResponse, client: client)
        self.task = task
    }

    /// Whether this class answers `request`. Subclasses override it (the base answers nothing).
    open class func canInit(with request: URLRequest) -> Bool { false }

    /// Whether this class answers `task`'s current request.
    open class func canInit(with task: URLSessionTask) -> Bool {
        guard let request = task.currentRequest else { return false }
        return canInit(with: request)
    }

    /// The request an instance is made with; the base returns `request`.
    open class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    /// Whether two requests are the same for a cache; the base compares URLs.
    open class func requestIsCacheEquivalent(_ a: URLRequest, to b: URLRequest) -> Bool {
        a.url == b.url
    }

    /// Starts loading; answer through `client`. Subclasses override it.
    open func startLoading() {}

    /// Stops loading (the task ended or was cancelled). Subclasses override it.
    open func stopLoading() {}

    // MARK: Registration

    private static let registered = Mutex<[ObjectIdentifier: (order: Int, type: URLProtocol.Type)]>([:])
    private static let registrationCount = Atomic<Int>(0)

    /// Makes `protocolClass` (a URLProtocol subclass) answer requests of
    /// every session; false for a class that is not one.
    @discardableResult
    open class func registerClass(_ protocolClass: AnyClass) -> Bool {
        guard let type = protocolClass as? URLProtocol.Type else { return false }
        let order = registrationCount.add(1, ordering: .relaxed).newValue
        registered.withLock { $0[ObjectIdentifier(type)] = (order, type) }
        hasRegistered.store(true, ordering: .releasing)
        return true
    }

    open class func unregisterClass(_ protocolClass: AnyClass) {
        registered.withLock { classes in
            classes[ObjectIdentifier(protocolClass)] = nil
            hasRegistered.store(!classes.isEmpty, ordering: .releasing)
        }
    }

    /// Whether any class is registered (read on every hop of every session:
    /// one atomic load when none is).
    static let hasRegistered = Atomic<Bool>(false)

    /// Registered classes, the last registered first.
    static var registeredClasses: [URLProtocol.Type] {
        registered.withLock { $0.values.sorted { $0.order > $1.order }.map(\.type) }
    }
}
