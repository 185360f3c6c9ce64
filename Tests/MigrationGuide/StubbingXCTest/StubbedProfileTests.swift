import Foundation
import URLSessionCompat
import XCTest

/// MIGRATION.md's "Tests that stub the network": a legacy XCTest case with
/// a URLProtocol stub, as written for FoundationNetworking, unchanged but
/// for the import. Run by `swift test` like every other test.
final class StubProtocol: URLProtocol, @unchecked Sendable {
    nonisolated(unsafe) static var responseBody = Data()

    override class func canInit(with request: URLRequest) -> Bool { true }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        let response = HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: nil, headerFields: nil)!
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: StubProtocol.responseBody)
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}
}

final class StubbedProfileTests: XCTestCase {
    func testProfileNameIsRead() {
        StubProtocol.responseBody = Data(#"{"name":"Ada"}"#.utf8)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [StubProtocol.self]
        let session = URLSession(configuration: configuration)

        let done = expectation(description: "profile loaded")
        session.dataTask(with: URL(string: "https://api.example.com/profile")!) { data, response, error in
            XCTAssertNil(error)
            XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200)
            let profile = try? JSONSerialization.jsonObject(with: data ?? Data()) as? [String: String]
            XCTAssertEqual(profile?["name"], "Ada")
            done.fulfill()
        }.resume()
        wait(for: [done], timeout: 10)
    }
}
