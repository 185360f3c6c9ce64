import AsyncURLSession
import Foundation
import Testing
import TestSupport
import URLSessionCompat

/// `reset`, `flush` and `getTasksWithCompletionHandler`.
@Suite struct ResetAndTaskListTests {
    @Test func reset_forgetsTheSessionsCredentials() async throws {
        try await withServer { server in
            let delegate = CompletionOnlyDelegate()
            let session = makeSession(delegate)
            let space = URLProtectionSpace(
                host: "127.0.0.1", port: server.port, protocol: "http", realm: "loopback",
                authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
            session.asyncSession.setCredential(URLCredential(user: "ann", password: "pw", persistence: .forSession), for: space)
            let first = session.dataTask(with: server.url("/auth/basic?user=ann&password=pw"))
            first.resume()
            await delegate.completed.wait()
            #expect((first.response as? HTTPURLResponse)?.statusCode == 200)
            await withCheckedContinuation { continuation in session.reset { continuation.resume() } }
            let second = session.dataTask(with: server.url("/auth/basic?user=ann&password=pw"))
            second.resume()
            await delegate.completed.wait(for: 2)
            #expect((second.response as? HTTPURLResponse)?.statusCode == 401)
            await withCheckedContinuation { continuation in session.flush { continuation.resume() } }
            session.invalidateAndCancel()
        }
    }

    @Test func getTasks_sortsLiveTasksByKind() async throws {
        try await withServer { server in
            let session = makeSession(nil)
            let data = session.dataTask(with: server.url("/bytes/1"))
            let upload = session.uploadTask(with: URLRequest(url: server.url("/echo")), from: Data("x".utf8))
            let download = session.downloadTask(with: server.url("/bytes/1"))
            let (listedData, listedUploads, listedDownloads) = await withCheckedContinuation { continuation in
                session.getTasksWithCompletionHandler { data, uploads, downloads in
                    continuation.resume(returning: (
                        data.map(\.taskIdentifier), uploads.map(\.taskIdentifier), downloads.map(\.taskIdentifier)
                    ))
                }
            }
            #expect(listedData == [data.taskIdentifier])
            #expect(listedUploads == [upload.taskIdentifier])
            #expect(listedDownloads == [download.taskIdentifier])
            session.invalidateAndCancel()
        }
    }
}
