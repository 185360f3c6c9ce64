import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport

@testable import AsyncURLSession

/// Servers that break the protocol or the connection at every phase
/// (`FaultServer`): each fault ends the task with a clear `URLError` (or,
/// where HTTP says how, a correct result), never a crash or a hang, and a
/// broken connection never serves the next request.
@Suite struct FaultInjectionTests {
    private static let ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    private func session(timeout: TimeInterval = 10) -> Session {
        var configuration = testConfiguration()
        configuration.timeoutIntervalForRequest = timeout
        configuration.responseCache = nil
        return Session(configuration: configuration)
    }

    private func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    /// The error a fetch ends with (nil if it succeeded).
    private func failure(_ session: Session, _ url: URL) async -> URLError? {
        do {
            _ = try await session.data(from: url)
            return nil
        } catch {
            return error as? URLError
        }
    }

    // MARK: - Resets and closes at every phase

    @Test func resetBeforeAnyResponse_isConnectionLost() async throws {
        try await withFaultServer([[.readRequest, .reset]]) { server in
            let error = await failure(session(), server.url("/"))
            #expect(error?.code == .networkConnectionLost)
            #expect(error?.failingURL == server.url("/"))
        }
    }

    @Test func closeWithoutAnyResponse_isConnectionLost() async throws {
        try await withFaultServer([[.readRequest, .close]]) { server in
            #expect(await failure(session(), server.url("/"))?.code == .networkConnectionLost)
        }
    }

    @Test func resetInTheMiddleOfTheStatusLine_fails() async throws {
        try await withFaultServer([[.readRequest, .send("HTTP/1.1 20"), .pause(milliseconds: 50), .reset]]) { server in
            let error = await failure(session(), server.url("/"))
            #expect(error != nil)
            #expect([.networkConnectionLost, .badServerResponse].contains(error?.code))
        }
    }

    @Test func resetAfterTheHead_beforeTheBody_isConnectionLost() async throws {
        try await withFaultServer([[
            .readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"), .pause(milliseconds: 50), .reset,
        ]]) { server in
            #expect(await failure(session(), server.url("/"))?.code == .networkConnectionLost)
        }
    }

    @Test func resetInTheMiddleOfTheBody_isConnectionLost_andTheEventsConsumerSawTheBytes() async throws {
        try await withFaultServer([[
            .readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + String(repeating: "x", count: 40)),
            .pause(milliseconds: 50), .reset,
        ]]) { server in
            let recorded = await record(session().dataTask(with: server.url("/")).resumedForFaults())
            #expect(recorded.error?.urlErrorCode == .networkConnectionLost)
            #expect(recorded.body.count == 40)
        }
    }

    @Test func halfCloseInTheMiddleOfTheBody_isConnectionLost() async throws {
        try await withFaultServer([[
            .readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + String(repeating: "x", count: 10)),
            .halfClose, .hold,
        ]]) { server in
            #expect(await failure(session(), server.url("/"))?.code == .networkConnectionLost)
        }
    }

    @Test func halfCloseInTheMiddleOfAChunkedBody_isConnectionLost() async throws {
        try await withFaultServer([[
            .readRequest, .send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"), .halfClose, .hold,
        ]]) { server in
            #expect(await failure(session(), server.url("/"))?.code == .networkConnectionLost)
        }
    }

    // MARK: - Lying framing

    @Test func contentLengthShorterThanTheBody_deliversTheDeclaredLength_andTheNextRequestIsNotPoisoned() async throws {
        // The first connection sends 10 bytes for a Content-Length of 5,
        // the extra five shaped like a response; then it answers a second
        // request on the same connection. A second request must never read
        // the leftover as its response.
        let smuggled = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloEVIL!"
        try await withFaultServer([[.readRequest, .send(smuggled), .readRequest, .send(Self.ok)], [.readRequest, .send(Self.ok)]]) { server in
            let session = session()
            let (first, _) = try await session.data(from: server.url("/first"))
            #expect(text(first) == "hello")
            let (second, _) = try await session.data(from: server.url("/second"))
            #expect(text(second) == "ok")
        }
    }

    @Test func contentLengthLongerThanTheBody_thenClose_isConnectionLost() async throws {
        try await withFaultServer([[.readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort"), .close]]) { server in
            #expect(await failure(session(), server.url("/"))?.code == .networkConnectionLost)
        }
    }

    @Test func contentLengthLongerThanTheBody_thenSilence_timesOut() async throws {
        try await withFaultServer([[.readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort"), .hold]]) { server in
            #expect(await failure(session(timeout: 1), server.url("/"))?.code == .timedOut)
        }
    }

    @Test func badChunkSize_fails() async throws {
        try await withFaultServer([[.readRequest, .send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"), .hold]]) { server in
            let error = await failure(session(timeout: 5), server.url("/"))
            #expect(error != nil)
            #expect(error?.code != .timedOut)
        }
    }

    @Test func hugeChunkSize_fails() async throws {
        try await withFaultServer([[.readRequest, .send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\nhello"), .close]]) { server in
            #expect(await failure(session(timeout: 5), server.url("/")) != nil)
        }
    }

    @Test func contentLengthAndChunked_areRefused_andTheConnectionIsNotReused() async throws {
        // RFC 9112 §6.3: such a message may be an attempt at smuggling and
        // "ought to be handled as an error" (SPEC §5, strict framing).
        let both = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
        try await withFaultServer([[.readRequest, .send(both), .readRequest, .send(Self.ok)], [.readRequest, .send(Self.ok)]]) { server in
            let session = session()
            let error = await failure(session, server.url("/first"))
            #expect(error?.code == .badServerResponse, "\(String(describing: error))")
            #expect(error?.localizedDescription.contains("Transfer-Encoding and Content-Length: 3") == true)
            let (second, _) = try await session.data(from: server.url("/second"))
            #expect(text(second) == "ok")
            #expect(server.acceptedConnections == 2)
        }
    }

    @Test func differentContentLengthsInOneField_areRefused_namingTheField_andTheConnectionIsNotReused() async throws {
        let listed = "HTTP/1.1 200 OK\r\nContent-Length: 4, 10\r\n\r\nokay"
        try await withFaultServer([[.readRequest, .send(listed), .readRequest, .send(Self.ok)], [.readRequest, .send(Self.ok)]]) { server in
            let session = session()
            let error = await failure(session, server.url("/"))
            #expect(error?.code == .badServerResponse, "\(String(describing: error))")
            #expect(error?.localizedDescription.contains("Content-Length: 4, 10") == true)
            let (data, _) = try await session.data(from: server.url("/next"))
            #expect(text(data) == "ok")
            #expect(server.acceptedConnections == 2)
        }
    }

    @Test func equalContentLengthsInOneField_areTakenAsOne() async throws {
        try await withFaultServer([[.readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello")]]) { server in
            let (data, _) = try await session().data(from: server.url("/"))
            #expect(text(data) == "hello")
        }
    }

    @Test func twoDifferentContentLengths_areRefused_andTheConnectionIsNotReused() async throws {
        let conflicting = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nhello"
        try await withFaultServer([[.readRequest, .send(conflicting), .readRequest, .send(Self.ok)], [.readRequest, .send(Self.ok)]]) { server in
            let session = session()
            let error = await failure(session, server.url("/"))
            #expect(error?.code == .badServerResponse, "\(String(describing: error))")
            #expect(error?.localizedDescription.contains("Content-Length") == true)
            do {
                let (data, _) = try await session.data(from: server.url("/next"))
                #expect(text(data) == "ok")
            } catch {
                Issue.record("\(error); accepted \(server.acceptedConnections), requests \(server.requests)")
            }
            #expect(server.acceptedConnections == 2)
        }
    }

    @Test func repeatedEqualContentLengths_areAccepted() async throws {
        let repeated = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello"
        try await withFaultServer([[.readRequest, .send(repeated)]]) { server in
            let (data, _) = try await session().data(from: server.url("/"))
            #expect(text(data) == "hello")
        }
    }

    // MARK: - Floods and slow servers

    @Test func floodOfInformationalResponses_thenAFinalOne_isEitherServedOrRefused_neverHangs() async throws {
        try await withFaultServer([[
            .readRequest, .repeated("HTTP/1.1 100 Continue\r\n\r\n", count: 5_000), .send(Self.ok),
        ]]) { server in
            do {
                let (data, _) = try await session().data(from: server.url("/"))
                #expect(text(data) == "ok")
            } catch {
                #expect(error is URLError)
            }
        }
    }

    @Test func endlessHeaderLines_areCut() async throws {
        // 2 MiB of header fields and no end of head: a cap ends it.
        try await withFaultServer([[
            .readRequest, .send("HTTP/1.1 200 OK\r\n"), .repeated("X-Filler: \(String(repeating: "a", count: 1000))\r\n", count: 2_000), .hold,
        ]]) { server in
            let error = await failure(session(timeout: 10), server.url("/"))
            #expect(error != nil)
            #expect(error?.code != .timedOut)
        }
    }

    @Test func slowHeaders_areBoundedByTheResourceTimeout() async throws {
        try await withFaultServer([[.readRequest, .trickle("HTTP/1.1 200 OK\r\nX-Slow: " + String(repeating: "s", count: 1000), milliseconds: 20)]]) { server in
            var configuration = testConfiguration()
            configuration.timeoutIntervalForResource = 1
            #expect(await failure(Session(configuration: configuration), server.url("/"))?.code == .timedOut)
        }
    }

    @Test func slowBody_isBoundedByTheResourceTimeout() async throws {
        try await withFaultServer([[
            .readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"), .trickle(String(repeating: "b", count: 1000), milliseconds: 20),
        ]]) { server in
            var configuration = testConfiguration()
            configuration.timeoutIntervalForResource = 1
            #expect(await failure(Session(configuration: configuration), server.url("/"))?.code == .timedOut)
        }
    }

    @Test func garbageInsteadOfAResponse_isBadServerResponse() async throws {
        try await withFaultServer([[.readRequest, .sendBytes([0x16, 0x03, 0x01, 0x00, 0x05, 0xFF, 0xFE, 0x00, 0x0D, 0x0A]), .close]]) { server in
            let error = await failure(session(), server.url("/"))
            #expect(error != nil)
            #expect([.badServerResponse, .networkConnectionLost, .cannotParseResponse].contains(error?.code))
        }
    }

    // MARK: - The pool after a fault

    @Test func connectionBrokenMidBody_isNotReused() async throws {
        try await withFaultServer([
            [.readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc"), .pause(milliseconds: 50), .reset],
            [.readRequest, .send(Self.ok), .readRequest, .send(Self.ok)],
        ]) { server in
            let session = session()
            _ = await failure(session, server.url("/broken"))
            let (data, _) = try await session.data(from: server.url("/after"))
            #expect(text(data) == "ok")
            #expect(server.acceptedConnections == 2)
        }
    }

    // MARK: - Downloads

    @Test func downloadResetMidBody_givesResumeData_thatFinishesTheFile() async throws {
        let body = String(repeating: "0123456789", count: 100)
        let head = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nETag: \"v1\"\r\nAccept-Ranges: bytes\r\n\r\n"
        let rest = "HTTP/1.1 206 Partial Content\r\nContent-Length: 600\r\nContent-Range: bytes 400-999/1000\r\nETag: \"v1\"\r\n\r\n"
        try await withFaultServer([
            [.readRequest, .send(head + String(body.prefix(400))), .pause(milliseconds: 100), .reset],
            [.readRequest, .send(rest + String(body.dropFirst(400)))],
        ]) { server in
            let session = session()
            let first = await record(session.downloadTask(with: server.url("/file")).resumedForFaults())
            guard let error = first.error as? URLError, let resumeData = error.downloadTaskResumeData else {
                Issue.record("no resume data: \(String(describing: first.error))")
                return
            }
            #expect(error.code == .networkConnectionLost)
            let second = await record(session.downloadTask(withResumeData: resumeData).resumedForFaults())
            #expect(second.error == nil)
            #expect(second.resumedAt?.0 == 400)
            #expect(second.downloadedFileSize == 1000)
            #expect(server.requests.last?.lowercased().contains("range: bytes=400-") == true)
        }
    }
}

extension SessionTask {
    fileprivate func resumedForFaults() -> SessionTask {
        resume()
        return self
    }
}
