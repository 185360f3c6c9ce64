import Foundation
import Testing

@testable import CurlEngine

/// A route's options (RESOLVE, CONNECT_TO, UNIX_SOCKET_PATH, INTERFACE,
/// IPRESOLVE) stay on a recycled handle until it is reset: a handle that
/// held one must never serve a transfer with another route or none.
@Suite struct ConnectRouteShapeTests {
    private func request(route: ConnectRoute?) -> TransferRequest {
        TransferRequest(
            url: "http://localhost/v1.43/info", method: "GET", headers: [], body: .none, idleTimeout: 60,
            resourceTimeout: 604_800, trustRootsPEM: nil, acceptEncoding: "", route: route)
    }

    @Test func routedHandle_servesOnlyAnEqualRoute() throws {
        let overrides = ConnectRoute(resolve: ["api.example.test:443:127.0.0.1"])
        let socket = ConnectRoute(unixSocketPath: "/tmp/a.sock")
        let shape = try #require(HandleShape(request(route: overrides)))
        #expect(shape.matches(request(route: overrides)))
        #expect(!shape.matches(request(route: nil)))
        #expect(!shape.matches(request(route: socket)))
        #expect(!shape.matches(request(route: ConnectRoute(resolve: ["api.example.test:443:127.0.0.2"]))))
        #expect(shape.matches(request(route: ConnectRoute(resolve: ["api.example.test:443:127.0.0.1"]))))
    }

    @Test func unroutedHandle_servesNoRoute() throws {
        let shape = try #require(HandleShape(request(route: nil)))
        #expect(!shape.matches(request(route: ConnectRoute(unixSocketPath: "/tmp/a.sock"))))
        #expect(!shape.matches(request(route: ConnectRoute(localInterface: "host!127.0.0.1"))))
        #expect(!shape.matches(request(route: ConnectRoute(ipVersion: .v6Only))))
    }

    @Test func socketsDiffer_byPathAndKind() throws {
        let path = ConnectRoute(unixSocketPath: "/tmp/a.sock")
        let shape = try #require(HandleShape(request(route: path)))
        #expect(!shape.matches(request(route: path.with(unixSocketPath: "/tmp/b.sock", isAbstract: false))))
        #expect(!shape.matches(request(route: path.with(unixSocketPath: "/tmp/a.sock", isAbstract: true))))
        #expect(shape.matches(request(route: ConnectRoute().with(unixSocketPath: "/tmp/a.sock", isAbstract: false))))
    }
}
