import Foundation
import Testing

@testable import CurlEngine

/// A recycled handle keeps its options only for a request of the same shape:
/// any difference (method, body, TLS, encoding, User-Agent, timeouts, trust
/// roots) must send the next request through a reset, and requests with
/// credentials never reuse a handle's options at all.
@Suite struct HandleShapeTests {
    private func request(
        url: String = "http://127.0.0.1:8080/a", method: String = "GET", body: TransferRequest.Body = .none,
        idleTimeout: Double = 60, resourceTimeout: Double = 604_800, trustRootsPEM: Data? = nil,
        acceptEncoding: String? = "", userAgent: String? = "AsyncURLSession",
        authentication: TransferRequest.Authentication? = nil
    ) -> TransferRequest {
        TransferRequest(
            url: url, method: method, headers: [], body: body, idleTimeout: idleTimeout,
            resourceTimeout: resourceTimeout, trustRootsPEM: trustRootsPEM, acceptEncoding: acceptEncoding,
            userAgent: userAgent, authentication: authentication)
    }

    @Test func sameShape_otherURL_matches() throws {
        let shape = try #require(HandleShape(request()))
        #expect(shape.matches(request(url: "http://127.0.0.1:8080/b?q=1")))
    }

    @Test func anyShapeOptionDiffering_doesNotMatch() throws {
        let shape = try #require(HandleShape(request()))
        let others = [
            request(method: "POST"),
            request(body: .data(Data([1]))),
            request(url: "https://127.0.0.1:8443/a"),
            request(idleTimeout: 5),
            request(resourceTimeout: 30),
            request(trustRootsPEM: Data("-----BEGIN CERTIFICATE-----".utf8)),
            request(acceptEncoding: nil),
            request(acceptEncoding: "gzip"),
            request(userAgent: nil),
            request(userAgent: "Other/1.0"),
        ]
        for other in others {
            #expect(!shape.matches(other), "matched \(other.method) \(other.url)")
        }
    }

    /// A body from memory (POSTFIELDS, no read callback) and one through
    /// the read callback never share a handle's options.
    @Test func bodyFromMemory_andBodyFromAFile_doNotShareAShape() throws {
        let memory = try #require(HandleShape(request(method: "POST", body: .data(Data([1, 2, 3])))))
        #expect(memory.matches(request(method: "POST", body: .data(Data(count: 5_000)))))
        #expect(!memory.matches(request(method: "POST", body: .file(URL(fileURLWithPath: "/dev/null")))))
        let file = try #require(HandleShape(request(method: "POST", body: .file(URL(fileURLWithPath: "/dev/null")))))
        #expect(!file.matches(request(method: "POST", body: .data(Data([1])))))
    }

    @Test func requestWithCredentials_hasNoShape_andMatchesNone() throws {
        let credentials = TransferRequest.Authentication(user: "u", password: "p", scheme: .digest)
        #expect(HandleShape(request(authentication: credentials)) == nil)
        let shape = try #require(HandleShape(request()))
        #expect(!shape.matches(request(authentication: credentials)))
    }
}
