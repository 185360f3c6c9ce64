import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@testable import AsyncURLSession

/// The lock-free once-only response of `ResponseSource`.
@Suite struct LazyResponseTests {
    private func response(_ status: Int) -> HTTPURLResponse {
        HTTPURLResponse(url: URL(string: "http://127.0.0.1/")!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: [:])!
    }

    @Test func theFirstStoreWins() {
        let lazy = LazyResponse()
        #expect(lazy.value == nil)
        let first = response(200)
        #expect(lazy.store(first) === first)
        #expect(lazy.store(response(500)) === first)
        #expect(lazy.value === first)
    }

    @Test func aResponseGivenAtInitIsKept() {
        let given = response(301)
        let lazy = LazyResponse(given)
        #expect(lazy.value === given)
        #expect(lazy.store(response(200)) === given)
    }

    /// Shared by the racing tasks as `ResponseSource` shares it: inline in
    /// an object.
    private final class Holder: Sendable {
        let lazy = LazyResponse()
    }

    @Test func racingStoresAllReturnTheSameResponse() async {
        let holder = Holder()
        let winners = await withTaskGroup(of: ObjectIdentifier.self) { group in
            for status in 200..<264 {
                let made = response(status)
                group.addTask { ObjectIdentifier(holder.lazy.store(made)) }
            }
            var seen = Set<ObjectIdentifier>()
            for await winner in group { seen.insert(winner) }
            return seen
        }
        #expect(winners.count == 1)
        #expect(holder.lazy.value.map(ObjectIdentifier.init) == winners.first)
    }
}
