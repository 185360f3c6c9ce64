import Foundation
import LoopbackServer
import Testing
import TestSupport
import URLSessionCompat

/// The session's own API: configuration copies, task lists, the async calls.
@Suite struct SessionAPITests {
    @Test func classicNames_shadowFoundationNetworking() {
        // This file imports only URLSessionCompat (and test helpers): the
        // names resolve to this library's classes.
        #expect(String(reflecting: URLSession.self) == "URLSessionCompat.URLSession")
        #expect(String(reflecting: URLSessionConfiguration.self) == "URLSessionCompat.URLSessionConfiguration")
        #expect(String(reflecting: URLSessionDataTask.self) == "URLSessionCompat.URLSessionDataTask")
    }

    @Test func configurationCopy_isIndependent() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 5
        let copy = configuration.copy() as? URLSessionConfiguration
        copy?.timeoutIntervalForRequest = 9
        #expect(configuration.timeoutIntervalForRequest == 5)
        #expect(copy?.timeoutIntervalForRequest == 9)
        #expect(URLSessionConfiguration.default !== URLSessionConfiguration.default)
    }

    @Test func copyingATask_givesTheSameTask() {
        let session = URLSession(configuration: .ephemeral)
        let task = session.dataTask(with: URL(fileURLWithPath: "/"))
        let copy = task.copy() as? URLSessionDataTask
        let same = copy === task
        #expect(same)
        session.invalidateAndCancel()
    }

    @Test func sessionConfiguration_isACopyTakenAtCreation() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 2
        let session = URLSession(configuration: configuration)
        configuration.httpMaximumConnectionsPerHost = 9
        #expect(session.configuration.httpMaximumConnectionsPerHost == 2)
        #expect(session.configuration !== session.configuration)
        session.invalidateAndCancel()
    }

    @Test func additionalHeaders_areSent() async throws {
        try await withServer { server in
            let session = makeSession(nil) { $0.httpAdditionalHeaders = ["X-Legacy": "yes", "X-Number": 7] }
            let (data, _) = try await session.data(from: server.url("/echo"))
            let text = String(decoding: data, as: UTF8.self).lowercased()
            #expect(text.contains("x-legacy") && text.contains("yes"))
            #expect(text.contains("x-number"))
            session.invalidateAndCancel()
        }
    }

    @Test func getAllTasks_listsLiveTasksOnly() async throws {
        try await withServer { server in
            let session = makeSession(nil)
            let live = session.dataTask(with: server.url("/bytes/1"))
            let done = Outcome<Data>()
            session.dataTask(with: server.url("/bytes/1")) { done.set($0, $1, $2) }.resume()
            _ = await done.value()
            // The completed task leaves the list once its handler has run.
            var listed: [Int] = []
            for _ in 0..<200 {
                listed = await withCheckedContinuation { continuation in
                    session.getAllTasks { continuation.resume(returning: $0.map(\.taskIdentifier)) }
                }
                if listed.count == 1 { break }
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(listed == [live.taskIdentifier])
            session.invalidateAndCancel()
        }
    }

    /// With no delegate the core collects the body, and the handler is
    /// posted to the delegate queue without the driver waiting for it.
    @Test func completionHandlerWithoutDelegate_runsOnTheSessionsDelegateQueue() async throws {
        try await withServer { server in
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            let session = makeSession(nil, queue: queue)
            let ranOnQueue = Outcome<Bool>()
            session.dataTask(with: server.url("/bytes/300")) { data, _, error in
                ranOnQueue.set(OperationQueue.current === queue && data?.count == 300 ? true : nil, nil, error)
            }.resume()
            let (ran, _, error) = await ranOnQueue.value()
            #expect(error == nil)
            #expect(ran == true)
            session.invalidateAndCancel()
        }
    }

    @Test func asyncData_perTaskDelegateHearsRedirects() async throws {
        try await withServer { server in
            let session = makeSession(nil)
            let delegate = RecordingDelegate(redirect: { _, _ in nil })
            let (_, response) = try await session.data(from: server.url("/redirect/1"), delegate: delegate)
            #expect((response as? HTTPURLResponse)?.statusCode == 302)
            session.invalidateAndCancel()
        }
    }

    @Test func asyncDownload_returnsAFileTheCallerOwns() async throws {
        try await withServer { server in
            let session = makeSession(nil)
            let (url, _) = try await session.download(from: server.url("/bytes/12345"))
            defer { try? FileManager.default.removeItem(at: url) }
            #expect(try Data(contentsOf: url) == LoopbackServer.patternBody(count: 12345))
            session.invalidateAndCancel()
        }
    }

    /// A download the connection dropped carries resume data in its error,
    /// and `download(resumeFrom:)` finishes the same file.
    @Test func asyncDownload_resumesFromTheResumeDataOfAFailure() async throws {
        try await withServer { server in
            let session = makeSession(nil)
            let size = 3_000_000
            let error = await #expect(throws: URLError.self) {
                _ = try await session.download(from: server.url("/range/\(size)?dropAfter=1000000"))
            }
            #expect(error?.code == .networkConnectionLost)
            let resumeData = try #require(error?.downloadTaskResumeData, "bytes had arrived: resume data is expected")
            let (url, response) = try await session.download(resumeFrom: resumeData)
            defer { try? FileManager.default.removeItem(at: url) }
            #expect((response as? HTTPURLResponse)?.statusCode == 206)
            #expect(try Data(contentsOf: url) == LoopbackServer.patternBody(count: size))
            session.invalidateAndCancel()
        }
    }

    @Test func asyncBytes_streamTheBody() async throws {
        try await withServer { server in
            let session = makeSession(nil)
            let (bytes, response) = try await session.bytes(from: server.url("/bytes/5000"))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            var count = 0
            for try await _ in bytes { count += 1 }
            #expect(count == 5000)
            session.invalidateAndCancel()
        }
    }

    @Test func cancellingTheCallingTask_cancelsAsyncData() async throws {
        try await withServer { server in
            let session = makeSession(nil)
            let call = Task { try await session.data(from: server.url("/stall/1000")) }
            try await Task.sleep(for: .milliseconds(50))
            call.cancel()
            await #expect(throws: URLError.self) { try await call.value }
            session.invalidateAndCancel()
        }
    }

    private func liveTaskCount(_ session: URLSession) async -> Int {
        await withCheckedContinuation { continuation in
            session.getAllTasks { continuation.resume(returning: $0.count) }
        }
    }

    /// With no delegate anywhere, `data(for:)` awaits the core itself: its
    /// task has left the session's list by the time the call returns.
    @Test func asyncDataWithoutDelegates_taskIsGoneWhenTheCallReturns() async throws {
        try await withServer { server in
            let session = makeSession(nil)
            let (data, response) = try await session.data(from: server.url("/bytes/300"))
            #expect(data.count == 300)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(await liveTaskCount(session) == 0)
            session.invalidateAndCancel()
        }
    }

    /// As scripts write it: the session made inline for one call and never
    /// held, many calls at once, each awaiting the core directly.
    @Test func asyncDataOnSessionsNobodyHolds_returnEveryBody() async throws {
        try await withServer { server in
            let url = server.url("/bytes/300")
            let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<16 {
                    group.addTask { try await URLSession(configuration: .ephemeral).data(from: url).0.count }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(sizes == Array(repeating: 300, count: 16))
        }
    }

    /// A call made from a Swift task cancelled beforehand fails with
    /// `cancelled` and leaves no task behind.
    @Test func asyncDataFromACancelledTask_failsAndLeavesNoTask() async throws {
        try await withServer { server in
            let session = makeSession(nil)
            let url = server.url("/bytes/300")
            let call = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await session.data(from: url)
            }
            do {
                _ = try await call.value
                Issue.record("a cancelled call returned a body")
            } catch let error as URLError {
                #expect(error.code == .cancelled)
            }
            #expect(await liveTaskCount(session) == 0)
            session.invalidateAndCancel()
        }
    }

    @Test func asyncUpload_fromData_sendsTheBody() async throws {
        try await withServer { server in
            let session = makeSession(nil)
            let body = LoopbackServer.patternBody(count: 40_000)
            var request = URLRequest(url: server.url("/echo-body"))
            request.httpMethod = "POST"
            let (data, _) = try await session.upload(for: request, from: body)
            #expect(data == body)
            session.invalidateAndCancel()
        }
    }

    @Test func asyncUpload_fromFile_sendsTheFile() async throws {
        try await withServer { server in
            let session = makeSession(nil)
            let body = LoopbackServer.patternBody(count: 50_000)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("compat-upload-\(UUID().uuidString)")
            try body.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            var request = URLRequest(url: server.url("/echo-body"))
            request.httpMethod = "PUT"
            let (data, response) = try await session.upload(for: request, fromFile: file)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(data == body)
            session.invalidateAndCancel()
        }
    }

    /// Suspended right after it starts: 20 pieces 100 ms apart cannot all
    /// have been read by then, and a paused transfer reads nothing more, so
    /// the handler cannot run before `resume()` however slow the machine is.
    @Test func suspendedTask_waits_thenFinishesAfterResume() async throws {
        try await withServer { server in
            let session = makeSession(nil)
            let result = Outcome<Data>()
            let task = session.dataTask(with: server.url("/drip/2000?chunk=100&interval=100")) { result.set($0, $1, $2) }
            task.resume()
            task.suspend()
            #expect(task.state == .suspended)
            try await Task.sleep(for: .milliseconds(300))
            #expect(!result.isSet, "a suspended task does not finish")
            task.resume()
            let (data, _, error) = await result.value()
            #expect(error == nil)
            #expect(data == LoopbackServer.patternBody(count: 2000))
            session.invalidateAndCancel()
        }
    }
}
