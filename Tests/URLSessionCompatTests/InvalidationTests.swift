import Foundation
import Synchronization
import Testing
import TestSupport
import URLSessionCompat

/// `finishTasksAndInvalidate`, `invalidateAndCancel`, and what comes after.
@Suite struct InvalidationTests {
    @Test func finishTasksAndInvalidate_reportsInvalidOnceAfterTheLastCompletion() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate()
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/delay/200"))
            task.resume()
            session.finishTasksAndInvalidate()
            await delegate.invalidated.wait()
            #expect(delegate.completed.count == 1)
            #expect(delegate.error(task) == nil)
            #expect(delegate.invalidated.count == 1)
        }
    }

    @Test func afterInvalidation_theSessionLetsGoOfItsDelegate() async throws {
        try await withServer { server in
            weak var weakDelegate: RecordingDelegate?
            let invalidated: Signal
            let session: URLSession
            do {
                let delegate = RecordingDelegate()
                weakDelegate = delegate
                invalidated = delegate.invalidated
                session = makeSession(delegate)
                session.dataTask(with: server.url("/bytes/10")).resume()
            }
            session.finishTasksAndInvalidate()
            await invalidated.wait()
            // The release happens right after the call returns; poll briefly.
            while weakDelegate != nil { try await Task.sleep(for: .milliseconds(5)) }
            #expect(session.delegate == nil)
        }
    }

    @Test func invalidateAndCancel_cancelsRunningTasks() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate()
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/stall/1000"))
            task.resume()
            session.invalidateAndCancel()
            await delegate.invalidated.wait()
            #expect((delegate.error(task) as? URLError)?.code == .cancelled)
            #expect(delegate.calls(task).last == "complete")
        }
    }

    @Test func invalidateAndCancel_alsoEndsTasksNeverResumed() async throws {
        try await withServer { server in
            let delegate = RecordingDelegate()
            let session = makeSession(delegate)
            let task = session.dataTask(with: server.url("/bytes/10"))
            session.invalidateAndCancel()
            await delegate.invalidated.wait()
            #expect((delegate.error(task) as? URLError)?.code == .cancelled)
        }
    }

    @Test func taskOfAnInvalidatedSession_failsWithAClearError() async throws {
        try await withServer { server in
            let session = makeSession(nil)
            session.finishTasksAndInvalidate()
            let result = Outcome<Data>()
            session.dataTask(with: server.url("/bytes/10")) { result.set($0, $1, $2) }.resume()
            let (_, _, error) = await result.value()
            let description = (error as? URLError)?.localizedDescription ?? ""
            #expect(description.contains("invalidated"))
            #expect(server.acceptedConnections == 0)
        }
    }

    @Test func sharedSession_cannotBeInvalidated() async throws {
        try await withServer { server in
            URLSession.shared.finishTasksAndInvalidate()
            URLSession.shared.invalidateAndCancel()
            let (data, _) = try await URLSession.shared.data(from: server.url("/bytes/5"))
            #expect(data.count == 5)
        }
    }

    @Test func delegateThatNeverAnswers_doesNotBlockOtherTasks() async throws {
        try await withServer { server in
            let delegate = SilentRedirectDelegate()
            let session = makeSession(delegate)
            let stuck = session.dataTask(with: server.url("/redirect/1"))
            stuck.resume()
            await delegate.askedForRedirect.wait()
            let other = session.dataTask(with: server.url("/bytes/1000"))
            other.resume()
            await delegate.completed.wait()
            #expect(delegate.completedTasks == [other.taskIdentifier])
            stuck.cancel()
            await delegate.completed.wait(for: 2)
            #expect(delegate.completedTasks == [other.taskIdentifier, stuck.taskIdentifier])
            session.invalidateAndCancel()
        }
    }
}

/// Never calls the redirect completion handler (a legacy bug this library
/// must survive).
final class SilentRedirectDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    // @unchecked: state behind the lock.
    let askedForRedirect = Signal()
    let completed = Signal()
    private let done = Mutex<[Int]>([])
    var completedTasks: [Int] { done.withLock { $0 } }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        askedForRedirect.fire()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        done.withLock { $0.append(task.taskIdentifier) }
        completed.fire()
    }
}
