import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Events of stream tasks, as Apple's `URLSessionStreamDelegate`. Every
/// method is optional; the task's own delegate is asked first.
public protocol URLSessionStreamDelegate: URLSessionTaskDelegate {
    /// No more bytes will be read: the peer closed its side, or `closeRead()`.
    func urlSession(_ session: URLSession, readClosedFor streamTask: URLSessionStreamTask)

    /// No more bytes will be written (`closeWrite()`).
    func urlSession(_ session: URLSession, writeClosedFor streamTask: URLSessionStreamTask)

    /// Never called on Linux: there is no route monitor to discover one.
    func urlSession(_ session: URLSession, betterRouteDiscoveredFor streamTask: URLSessionStreamTask)
}

extension URLSessionStreamDelegate {
    public func urlSession(_ session: URLSession, readClosedFor streamTask: URLSessionStreamTask) {
        DefaultImplementationMarker.raise()
    }

    public func urlSession(_ session: URLSession, writeClosedFor streamTask: URLSessionStreamTask) {
        DefaultImplementationMarker.raise()
    }

    public func urlSession(_ session: URLSession, betterRouteDiscoveredFor streamTask: URLSessionStreamTask) {
        DefaultImplementationMarker.raise()
    }
}
