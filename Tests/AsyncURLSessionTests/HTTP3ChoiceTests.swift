@testable import AsyncURLSession
import Foundation
import LoopbackServer
import Logging
import Testing

/// `assumesHTTP3Capable`: HTTP/3 is asked of libcurl only where it has it;
/// elsewhere requests go out as before and the log says why, once.
@Suite struct HTTP3ChoiceTests {
    @Test func asked_withHTTP3_prefersIt_andSaysNothing() {
        let choice = HTTP3Choice(asked: true, libraryHasHTTP3: true, libcurlVersion: "8.11.1")
        #expect(choice.prefersHTTP3)
        #expect(choice.notice == nil)
    }

    @Test func asked_withoutHTTP3_goesAsBefore_andSaysWhy() throws {
        let choice = HTTP3Choice(asked: true, libraryHasHTTP3: false, libcurlVersion: "7.88.1")
        #expect(!choice.prefersHTTP3)
        let notice = try #require(choice.notice)
        #expect(notice.contains("7.88.1"))
        #expect(notice.contains("no HTTP/3"))
    }

    @Test func notAsked_changesNothing() {
        for library in [true, false] {
            let choice = HTTP3Choice(asked: false, libraryHasHTTP3: library, libcurlVersion: "x")
            #expect(!choice.prefersHTTP3)
            #expect(choice.notice == nil)
        }
    }

    @Test func ephemeralSessions_keepNoAltSvcCache() {
        let choice = HTTP3Choice(asked: true, libraryHasHTTP3: true, libcurlVersion: "8.11.1")
        #expect(choice.altSvcFile(kind: .ephemeral) == nil)
        let without = HTTP3Choice(asked: true, libraryHasHTTP3: false, libcurlVersion: "7.88.1")
        #expect(without.altSvcFile(kind: .default) == nil)
    }

    /// The same test means something on either kind of libcurl: with
    /// HTTP/3, the loopback server (TCP only) is still reached (libcurl
    /// falls back) and nothing is logged; without, the log says why once
    /// for the session, however many requests it makes.
    @Test func aSessionAskingForHTTP3_reachesTheServer_andLogsOnceWhyNot() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let recorder = LoggingTests.Recorder()
            var configuration = testConfiguration(trusting: server)
            configuration.assumesHTTP3Capable = true
            configuration.logger = recorder.logger(level: .notice)
            let session = Session(configuration: configuration)
            for _ in 0..<3 {
                let (data, response) = try await session.data(from: server.url("/bytes/10"))
                #expect(data.count == 10)
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
            }
            let notices = recorder.all.filter { $0.message.contains("assumesHTTP3Capable") }
            #expect(notices.count == (NetworkLibrary.supportsHTTP3 ? 0 : 1))
            let route = configuration.makeConnectRoute()
            #expect((route?.prefersHTTP3 ?? false) == NetworkLibrary.supportsHTTP3)
        }
    }
}
