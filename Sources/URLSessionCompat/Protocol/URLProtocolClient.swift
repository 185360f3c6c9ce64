import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a `URLProtocol` reports its load with (Foundation's protocol, for
/// this adapter's `URLProtocol`).
///
/// Authentication challenges: `urlProtocol(_:didReceive:)` with a challenge
/// is not routed to the session's delegate yet; the load fails with
/// `URLError(.userAuthenticationRequired)` naming the protection space. A
/// protocol that wants the session's challenge handling answers with a 401
/// response carrying `WWW-Authenticate` instead, which goes through the
/// delegate as a server's does.
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
