import Foundation
import LoopbackServer
import Testing
import TestSupport
import URLSessionCompat

/// The classic adapter reaches a Unix socket (issue 55): through its
/// configuration's `unixSocket` addition, and through `http+unix://` URLs.
@Suite struct UnixSocketClassicTests {
    @Test func configurationSocket_andUnixURL_reachTheServer() async throws {
        let path = "/tmp/aus-classic-\(getpid()).sock"
        try await withServer(LoopbackServer.Options(unixSocketPath: path)) { server in
            let configuration = URLSessionConfiguration.ephemeral
            configuration.unixSocket = try .path(path)
            let session = URLSession(configuration: configuration)
            defer { session.invalidateAndCancel() }
            for url in [URL(string: "http://localhost/bytes/6")!, server.url("/bytes/6")] {
                let (data, response) = try await session.data(from: url)
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                #expect(data.count == 6)
            }
            #expect(server.acceptedConnections == 1)
        }
    }
}
