import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a `URLProtocol` reports its load with (Foundation's protocol, for
/// this adapter's `URLProtocol`).
///
/// Authentication challenges: `urlProtocol(_:didReceive:)` asks the task's
/// delegate (`urlSession(_:task:didReceive:completionHandler:)`, and for
/// connection-level methods the session delegate's method first), as a
/// server's 401 would; the answer goes to the challenge's `sender`
/// (`use(_:for:)`, `performDefaultHandling(for:)`, `cancel(_:)`,
/// `rejectProtectionSpaceAndContinue(with:)`), on a thread of the
/// adapter's. Without a delegate method the answer is default handling.
public protocol URLProtocolClient: NSObjectProtocol, Sendable {
    func urlProtocol(_ protocol: URLProtocol, wasRedirectedTo request: URLRequest, redirectResponse: URLResponse)
    func urlProtocol(_ protocol: URLProtocol, cachedResponseIsValid cachedResponse: CachedURLResponse)
    func urlProtocol(_ protocol: URLProtocol, didReceive response: URLResponse, cacheStoragePolicy policy: URLCache.StoragePolicy)
    func urlProtocol(_ protocol: URLProtocol, didLoad data: Data)
    func urlProtocolDidFinishLoading(_ protocol: URLProtocol)
    func urlProtocol(_ protocol: URLProtocol, didFailWithError error: any Error)
    func urlProtocol(_ protocol: URLProtocol, didReceive challenge: URLAuthenticationChallenge)
    func urlProtocol(_ protocol: URLProtocol, didCancel challenge: URLAuthenticationChallenge)
}
