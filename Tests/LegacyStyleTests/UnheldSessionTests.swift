import Foundation
import LoopbackServer
import Testing
import TestSupport
import URLSessionCompat

/// Sessions made inline and never stored, tasks never held after
/// `resume()`: the most common shape of legacy code. Apple's contract is
/// that a session lives, with its delegate, until it is invalidated, and a
/// resumed task runs to its end whether or not anyone holds it.
@Suite struct UnheldSessionTests {
    @Test func dataTask_ofASessionNobodyHolds_completesThroughItsDelegate() async throws {
        try await withServer { server in
            let delegate = LegacyDelegate()
            URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .dataTask(with: server.url("/bytes/5000")).resume()
            await delegate.completed.wait()
            #expect(delegate.error == nil)
            #expect(delegate.body.count == 5000)
        }
    }

    @Test func uploadTask_ofASessionNobodyHolds_completesThroughItsDelegate() async throws {
        try await withServer { server in
            let delegate = LegacyDelegate()
            var request = URLRequest(url: server.url("/echo-body"))
            request.httpMethod = "POST"
            URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .uploadTask(with: request, from: Data("legacy".utf8)).resume()
            await delegate.completed.wait()
            #expect(delegate.error == nil)
            #expect(delegate.body == Data("legacy".utf8))
        }
    }

    @Test func downloadTask_ofASessionNobodyHolds_completesThroughItsDelegate() async throws {
        try await withServer { server in
            let delegate = LegacyDelegate()
            URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                .downloadTask(with: server.url("/bytes/7000")).resume()
            await delegate.completed.wait()
            #expect(delegate.error == nil)
            #expect(delegate.downloaded?.count == 7000)
        }
    }

    @Test func completionHandler_ofASessionNobodyHolds_isCalled() async throws {
        try await withServer { server in
            let result = HandlerResult<Data>()
            URLSession(configuration: legacyConfiguration())
                .dataTask(with: server.url("/bytes/300")) { result.set($0, $1, $2) }.resume()
            let (data, response, error) = await result.value()
            #expect(error == nil)
            #expect(data?.count == 300)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
        }
    }

    @Test func downloadHandler_ofASessionNobodyHolds_isCalledWithTheFile() async throws {
        try await withServer { server in
            let result = HandlerResult<Data>()
            URLSession(configuration: legacyConfiguration(), delegate: LegacyDelegate(), delegateQueue: nil)
                .downloadTask(with: server.url("/bytes/900")) { url, response, error in
                    result.set(url.flatMap { try? Data(contentsOf: $0) }, response, error)
                }.resume()
            let (data, _, error) = await result.value()
            #expect(error == nil)
            #expect(data?.count == 900)
        }
    }

    @Test func finishTasksAndInvalidate_ofASessionNobodyHolds_reportsInvalidationAfterTheTask() async throws {
        try await withServer { server in
            let delegate = LegacyDelegate()
            do {
                let session = URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
                session.dataTask(with: server.url("/drip/2000?interval=10&chunk=200")).resume()
                session.finishTasksAndInvalidate()
            }
            await delegate.invalidated.wait()
            #expect(delegate.calls.last == "invalid")
            #expect(delegate.calls.contains("complete"))
            #expect(delegate.body.count == 2000)
        }
    }

    @Test func completionHandlerStartingANewTask_onASessionNobodyHolds_runsTheChain() async throws {
        try await withServer { server in
            let result = HandlerResult<Data>()
            let url = server.url("/bytes/10")
            let session = URLSession(configuration: legacyConfiguration(), delegate: LegacyDelegate(), delegateQueue: nil)
            // The handler starts the next request: only the task chain holds the session.
            session.dataTask(with: url) { _, _, _ in
                session.dataTask(with: url) { _, _, _ in
                    session.dataTask(with: url) { result.set($0, $1, $2) }.resume()
                }.resume()
            }.resume()
            let (data, _, error) = await result.value()
            #expect(error == nil)
            #expect(data?.count == 10)
        }
    }
}
