internal import CurlEngine
import Foundation

extension SessionConfiguration {
    /// The engine's route for the configuration's reach options, made once
    /// per session (the lists libcurl needs are built here, not per
    /// request); nil when it sets none, so requests carry nothing.
    func makeConnectRoute() -> ConnectRoute? {
        let http3Choice = self.http3Choice
        let ipVersion: ConnectRoute.IPVersion
        switch self.ipVersion {
        case .any: ipVersion = .any
        case .v4Only: ipVersion = .v4Only
        case .v6Only: ipVersion = .v6Only
        }
        let route = ConnectRoute(
            resolve: hostOverrides.filter(\.isResolve).map(\.curlLine),
            connectTo: hostOverrides.filter { !$0.isResolve }.map(\.curlLine),
            unixSocketPath: unixSocket?.path,
            unixSocketIsAbstract: unixSocket?.isAbstract ?? false,
            localInterface: localEndpoint?.curlValue,
            ipVersion: ipVersion,
            happyEyeballsMilliseconds: happyEyeballsDelay.map { max(0, Int(($0 * 1000).rounded())) },
            prefersHTTP3: http3Choice.prefersHTTP3, altSvcFile: http3Choice.altSvcFile(kind: kind))
        return route.isEmpty ? nil : route
    }
}

extension SessionConfiguration {
    /// `assumesHTTP3Capable` against what the linked libcurl has.
    var http3Choice: HTTP3Choice {
        HTTP3Choice(
            asked: assumesHTTP3Capable, libraryHasHTTP3: NetworkLibrary.supportsHTTP3,
            libcurlVersion: NetworkLibrary.version)
    }
}
