import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Apple's `URLCache`, backed by an async core `ResponseCache`, so code that
/// reads or stores responses directly sees what its sessions stored, under
/// the same rules. In a file that imports `URLSessionCompat` this class
/// shadows FoundationNetworking's; `CachedURLResponse` stays Foundation's.
open class URLCache: NSObject, @unchecked Sendable {
    // @unchecked: its only state is the response cache, which is Sendable.

    public typealias StoragePolicy = FoundationNetworking.URLCache.StoragePolicy

    /// The cache underneath: `ResponseCache.shared` for the first `shared`.
    public let responseCache: ResponseCache

    public init(responseCache: ResponseCache) {
        self.responseCache = responseCache
        super.init()
    }

    /// A cache with a disk half in `directory` (created 0700), or in memory
    /// only when `directory` is nil.
    public convenience init(memoryCapacity: Int, diskCapacity: Int, directory: URL? = nil) {
        self.init(responseCache: ResponseCache(
            memoryCapacity: memoryCapacity, diskCapacity: diskCapacity, directory: directory))
    }

    /// The older initializer: a relative `path` is a folder inside the
    /// user's cache folder (`$XDG_CACHE_HOME`, else `~/.cache`).
    public convenience init(memoryCapacity: Int, diskCapacity: Int, diskPath path: String?) {
        let directory = path.flatMap { path -> URL? in
            path.hasPrefix("/") ? URL(fileURLWithPath: path) : ResponseCache.userCacheFolder?.appendingPathComponent(path)
        }
        self.init(memoryCapacity: memoryCapacity, diskCapacity: diskCapacity, directory: directory)
    }

    private static let sharedCache = Mutex(URLCache(responseCache: .shared))

    /// The cache `.default` configurations get when they are made.
    open class var shared: URLCache {
        get { sharedCache.withLock { $0 } }
        set { sharedCache.withLock { $0 = newValue } }
    }

    open var memoryCapacity: Int {
        get { responseCache.memoryCapacity }
        set { responseCache.memoryCapacity = newValue }
    }

    open var diskCapacity: Int {
        get { responseCache.diskCapacity }
        set { responseCache.diskCapacity = newValue }
    }

    open var currentMemoryUsage: Int { responseCache.currentMemoryUsage }
    open var currentDiskUsage: Int { responseCache.currentDiskUsage }

    open func cachedResponse(for request: URLRequest) -> CachedURLResponse? {
        responseCache.cachedResponse(for: request).map(Self.foundationResponse)
    }

    /// Stores an HTTP response (others are ignored: only HTTP is cached here).
    open func storeCachedResponse(_ cachedResponse: CachedURLResponse, for request: URLRequest) {
        guard let stored = Self.coreResponse(cachedResponse) else { return }
        responseCache.storeCachedResponse(stored, for: request)
    }

    open func removeCachedResponse(for request: URLRequest) {
        responseCache.removeCachedResponse(for: request)
    }

    open func removeAllCachedResponses() {
        responseCache.removeAllCachedResponses()
    }

    open func removeCachedResponses(since date: Date) {
        responseCache.removeCachedResponses(since: date)
    }

    open func storeCachedResponse(_ cachedResponse: CachedURLResponse, for dataTask: URLSessionDataTask) {
        guard let request = dataTask.currentRequest ?? dataTask.originalRequest else { return }
        storeCachedResponse(cachedResponse, for: request)
    }

    open func getCachedResponse(
        for dataTask: URLSessionDataTask, completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void
    ) {
        completionHandler((dataTask.currentRequest ?? dataTask.originalRequest).flatMap { cachedResponse(for: $0) })
    }

    open func removeCachedResponse(for dataTask: URLSessionDataTask) {
        guard let request = dataTask.currentRequest ?? dataTask.originalRequest else { return }
        removeCachedResponse(for: request)
    }

    // MARK: - Conversions

    static func foundationResponse(_ stored: CachedResponse) -> CachedURLResponse {
        CachedURLResponse(
            response: stored.response, data: stored.data, userInfo: nil,
            storagePolicy: foundationPolicy(stored.storagePolicy))
    }

    static func coreResponse(_ cached: CachedURLResponse) -> CachedResponse? {
        guard let response = cached.response as? HTTPURLResponse else { return nil }
        return CachedResponse(response: response, data: cached.data, storagePolicy: corePolicy(cached.storagePolicy))
    }

    static func foundationPolicy(_ policy: CachedResponse.StoragePolicy) -> StoragePolicy {
        switch policy {
        case .allowed: return .allowed
        case .allowedInMemoryOnly: return .allowedInMemoryOnly
        case .notAllowed: return .notAllowed
        }
    }

    static func corePolicy(_ policy: StoragePolicy) -> CachedResponse.StoragePolicy {
        switch policy {
        case .allowed: return .allowed
        case .allowedInMemoryOnly: return .allowedInMemoryOnly
        case .notAllowed: return .notAllowed
        @unknown default: return .notAllowed
        }
    }
}
