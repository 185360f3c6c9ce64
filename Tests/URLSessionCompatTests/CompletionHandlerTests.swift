import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport
import URLSessionCompat

/// Tasks made with a completion handler get their result there, and the
/// delegate hears only redirects and challenges.
@Suite struct CompletionHandlerTests {
    @Test func dataTask_deliversBodyToTheHandlerAndNotToTheDelegate() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate()
            let session = makeSession(delegate)
            let result = Outcome<Data>()
            let task = session.dataTask(with: server.url("/redirect/1")) { data, response, error in
                result.set(data, response, error)
            }
            task.resume()
            let (data, response, error) = await result.value()
            #expect(error == nil)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(String(decoding: data ?? Data(), as: UTF8.self) == "done")
            let calls = delegate.calls(task)
            #expect(calls.contains("redirect 302"))
            #expect(!calls.contains("data") && !calls.contains("response") && !calls.contains("complete"))
            session.invalidateAndCancel()
        }
    }

    /// A handler that starts a task which fails at once (nothing listens on
    /// the port, so the send may fail inside `resume()`): that task's handler
    /// runs after this one returns, not nested inside it.
    @Test func handlerStartingATaskThatFailsAtOnce_runsBeforeTheNextHandler() async throws {
        let session = makeSession(nil)
        let steps = Mutex<[String]>([])
        let done = Outcome<Data>()
        try await withTimeLimit(30) {
            session.dataTask(with: URL(string: "http://127.0.0.1:1/first")!) { _, _, _ in
                steps.withLock { $0.append("first begins") }
                session.dataTask(with: URL(string: "http://127.0.0.1:1/second")!) { data, response, error in
                    steps.withLock { $0.append("second") }
                    done.set(data, response, error)
                }.resume()
                steps.withLock { $0.append("first ends") }
            }.resume()
            let (_, _, error) = await done.value()
            #expect((error as? URLError)?.code == .cannotConnectToHost)
        }
        #expect(steps.withLock { $0 } == ["first begins", "first ends", "second"])
        session.invalidateAndCancel()
    }

    /// With no delegate at all, the core collects the body (no events): a
    /// redirect gets the default (followed) and the handler gets the body.
    @Test func dataTask_withoutDelegate_followsRedirectsAndDeliversTheBody() async throws {
        try await withServer { server in
            let session = makeSession(nil)
            let result = Outcome<Data>()
            let task = session.dataTask(with: server.url("/redirect/2")) { result.set($0, $1, $2) }
            task.resume()
            let (data, response, error) = await result.value()
            #expect(error == nil)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(String(decoding: data ?? Data(), as: UTF8.self) == "done")
            #expect(task.countOfBytesReceived == 4)
            session.invalidateAndCancel()
        }
    }

    /// What a finished task reports about itself, as URLSessionTask does:
    /// the error it ended with, byte counts, progress, and the description
    /// its owner gave it.
    @Test func finishedTask_reportsItsErrorCountsAndProgress() async throws {
        try await withServer { server in
            let session = makeSession(nil)
            let ok = Outcome<Data>()
            let task = session.dataTask(with: server.url("/bytes/5000")) { ok.set($0, $1, $2) }
            task.taskDescription = "five thousand"
            #expect(task.error == nil)
            task.resume()
            _ = await ok.value()
            #expect(task.error == nil)
            #expect(task.state == .completed)
            #expect(task.countOfBytesReceived == 5000)
            #expect(task.countOfBytesExpectedToReceive == 5000)
            #expect(task.progress.completedUnitCount == 5000)
            #expect(task.taskDescription == "five thousand")

            let failed = Outcome<Data>()
            let dropped = session.dataTask(with: server.url("/drop/100000?after=1000")) { failed.set($0, $1, $2) }
            dropped.resume()
            let (_, _, error) = await failed.value()
            #expect((error as? URLError)?.code == .networkConnectionLost)
            #expect((dropped.error as? URLError)?.code == .networkConnectionLost)
            #expect(dropped.state == .completed)
            session.invalidateAndCancel()
        }
    }

    /// Handlers of tasks without a delegate share one lane on a serial queue,
    /// but a concurrent queue may still run two at once, as its owner asked:
    /// here the first handler waits for the second.
    @Test func handlersWithoutDelegate_onAConcurrentQueue_mayOverlap() async throws {
        try await withServer { server in
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 2
            let session = makeSession(nil, queue: queue)
            let secondRan = DispatchSemaphore(value: 0)
            let first = Outcome<Bool>()
            let second = Outcome<Bool>()
            session.dataTask(with: server.url("/bytes/10")) { _, _, error in
                // 30 s: on one CPU shared with the whole suite, libdispatch
                // took more than 10 s to give the queue its second thread.
                let sawSecond = secondRan.wait(timeout: .now() + 30 * testTimeScale) == .success
                first.set(sawSecond, nil, error)
            }.resume()
            // The second request starts once the first handler is running.
            try await Task.sleep(for: .milliseconds(200))
            session.dataTask(with: server.url("/bytes/10")) { _, _, error in
                secondRan.signal()
                second.set(true, nil, error)
            }.resume()
            let (sawSecond, _, error) = await first.value()
            _ = await second.value()
            #expect(error == nil)
            #expect(sawSecond == true, "the second handler waited for the first on a concurrent queue")
            session.invalidateAndCancel()
        }
    }

    @Test func dataTask_withoutDelegate_cancelled_givesTheCancelledError() async throws {
        try await withServer { server in
            let session = makeSession(nil)
            let result = Outcome<Data>()
            let task = session.dataTask(with: server.url("/stall-headers")) { result.set($0, $1, $2) }
            task.resume()
            try await Task.sleep(for: .milliseconds(100))
            task.cancel()
            let (data, _, error) = await result.value()
            #expect(data == nil)
            #expect((error as? URLError)?.code == .cancelled)
            session.invalidateAndCancel()
        }
    }

    /// A task delegate set before `resume()` still hears the redirect: the
    /// body is then not collected by the core.
    @Test func dataTask_withATaskDelegate_stillTellsItAboutRedirects() async throws {
        try await withServer { server in
            let session = makeSession(nil)
            let delegate = RecordingDelegate()
            let result = Outcome<Data>()
            let task = session.dataTask(with: server.url("/redirect/1")) { result.set($0, $1, $2) }
            task.delegate = delegate
            task.resume()
            let (data, _, error) = await result.value()
            #expect(error == nil)
            #expect(String(decoding: data ?? Data(), as: UTF8.self) == "done")
            #expect(delegate.calls(task).contains("redirect 302"))
            session.invalidateAndCancel()
        }
    }

    @Test func dataTask_failure_givesNilDataAndTheError() async throws {
        try await withServer { server in
            let session = makeSession(nil)
            let result = Outcome<Data>()
            session.dataTask(with: server.url("/drop/100000")) { result.set($0, $1, $2) }.resume()
            let (data, _, error) = await result.value()
            #expect(data == nil)
            #expect((error as? URLError)?.code == .networkConnectionLost)
            session.invalidateAndCancel()
        }
    }

    @Test func bodyOverTheLimit_failsWithDataLengthExceedsMaximum() async throws {
        try await withServer { server in
            let session = makeSession(nil) { $0.maximumCollectedBodySize = 10_000 }
            let result = Outcome<Data>()
            session.dataTask(with: server.url("/bytes/100000")) { result.set($0, $1, $2) }.resume()
            let (_, _, error) = await result.value()
            #expect((error as? URLError)?.code == .dataLengthExceedsMaximum)
            session.invalidateAndCancel()
        }
    }

    /// From Data and from a file.
    @Test(arguments: [false, true])
    func uploadTask_handlerGetsTheResponseBody(fromFile: Bool) async throws {
        try await withServer { server in
            let session = makeSession(nil)
            let result = Outcome<Data>()
            let body = LoopbackServer.patternBody(count: 30_000)
            let request = URLRequest(url: server.url("/echo-body"))
            let handler: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { result.set($0, $1, $2) }
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("compat-upload-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: file) }
            if fromFile { try body.write(to: file) }
            let task = fromFile
                ? session.uploadTask(with: request, fromFile: file, completionHandler: handler)
                : session.uploadTask(with: request, from: body, completionHandler: handler)
            task.resume()
            let (data, _, error) = await result.value()
            #expect(error == nil)
            #expect(data == body)
            session.invalidateAndCancel()
        }
    }

    @Test func downloadTask_fileExistsInTheHandlerAndIsDeletedAfter() async throws {
        try await withServer { server in
            let session = makeSession(nil)
            let contents = Outcome<Data>()
            let location = Outcome<URL>()
            session.downloadTask(with: server.url("/bytes/70000")) { url, response, error in
                contents.set(url.flatMap { try? Data(contentsOf: $0) }, response, error)
                location.set(url, response, error)
            }.resume()
            let (data, _, error) = await contents.value()
            #expect(error == nil)
            #expect(data == LoopbackServer.patternBody(count: 70_000))
            let url = try #require(await location.value().0)
            // The handler returned before `value()` could: the file is gone by
            // the time the session deletes it, which is right after. Poll a
            // little (bounded by the test's limit).
            while FileManager.default.fileExists(atPath: url.path) { try await Task.sleep(for: .milliseconds(5)) }
            session.invalidateAndCancel()
        }
    }
}

/// The three arguments of a completion handler, awaited once.
final class Outcome<Value: Sendable>: Sendable {
    private let signal = Signal()
    private let stored = Mutex<(Value?, URLResponse?, (any Error)?)?>(nil)

    func set(_ value: Value?, _ response: URLResponse?, _ error: (any Error)?) {
        stored.withLock { $0 = (value, response, error) }
        signal.fire()
    }

    /// Whether the handler ran yet.
    var isSet: Bool { stored.withLock { $0 != nil } }

    func value() async -> (Value?, URLResponse?, (any Error)?) {
        await signal.wait()
        return stored.withLock { $0 } ?? (nil, nil, nil)
    }
}
