import Foundation
import LoopbackServer
import Testing

@testable import AsyncURLSession

extension LoadSensitiveTests {
@Suite struct DownloadTests {
    /// Starts a download and cancels it with resume data at its first progress event.
    private func resumeDataAfterFirstProgress(_ session: Session, _ url: URL) async throws -> Data {
        let task = session.downloadTask(with: url)
        task.resume()
        for try await event in task.events {
            if case .downloadProgress = event {
                return try #require(await task.cancelByProducingResumeData(), "the server sends an ETag: resume data is expected")
            }
        }
        throw ChildProcessError("the download ended before its first progress event")
    }

    @Test(arguments: ["/bytes/0", "/bytes/1", "/bytes/1048576", "/bytes/67108864", "/chunked/300000?chunk=10000"])
    func download_writesTheServedBytes_withMonotonicProgress(path: String) async throws {
        try await withServer(timeLimit: 60) { server in
            let task = Session(configuration: testConfiguration()).downloadTask(with: server.url(path))
            #expect(task.kind == .download)
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error == nil)
            let size = Int(path.split(separator: "/").last!.split(separator: "?").first!)!
            #expect(recorded.downloadedFileSize == size)
            #expect(recorded.downloadedFileMatchesPattern == true)
            let totals = recorded.downloadProgress.map(\.totalBytes)
            #expect(totals == totals.sorted())
            #expect(totals.last ?? 0 == Int64(size))
            #expect(recorded.downloadProgress.reduce(0) { $0 + $1.bytes } == Int64(size))
            let expected = path.hasPrefix("/chunked") ? -1 : Int64(size)
            #expect(recorded.downloadProgress.allSatisfy { $0.totalBytesExpected == expected })
            #expect(recorded.kinds.suffix(2) == ["downloaded", "metrics"])
            // Deleted once the consumer pulled past the event.
            if let file = recorded.downloadedFile {
                #expect(!FileManager.default.fileExists(atPath: file.path))
            }
        }
    }

    @Test func downloadedFile_existsDuringTheEvent_andSurvivesWhenMoved() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).downloadTask(with: server.url("/bytes/5000"))
            task.resume()
            let destination = FileManager.default.temporaryDirectory.appendingPathComponent("moved-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: destination) }
            for try await event in task.events {
                if case .downloaded(let location) = event {
                    #expect(FileManager.default.fileExists(atPath: location.path))
                    let attributes = try FileManager.default.attributesOfItem(atPath: location.path)
                    #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
                    try FileManager.default.moveItem(at: location, to: destination)
                }
            }
            #expect(try Data(contentsOf: destination) == LoopbackServer.patternBody(count: 5000))
        }
    }

    @Test func countersAndProgress_agreeWithTheEvents() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).downloadTask(with: server.url("/bytes/300000"))
            let progress = task.progress
            task.resume()
            let recorded = await record(task)
            #expect(task.countOfBytesReceived == 300_000)
            #expect(task.countOfBytesExpectedToReceive == 300_000)
            #expect(recorded.downloadProgress.last?.totalBytes == task.countOfBytesReceived)
            #expect(progress.completedUnitCount == 300_000)
            #expect(progress.totalUnitCount == 300_000)
            #expect(progress.fractionCompleted == 1)
        }
    }

    @Test func downloadFor_handsTheFileToTheCaller() async throws {
        try await withServer { server in
            let (location, response) = try await Session(configuration: testConfiguration())
                .download(from: server.url("/bytes/70000"))
            defer { try? FileManager.default.removeItem(at: location) }
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(try Data(contentsOf: location) == LoopbackServer.patternBody(count: 70_000))
        }
    }

    @Test func cancelWithResumeData_thenResume_givesTheIdenticalFile() async throws {
        try await withServer(timeLimit: 60) { server in
            let size = 256 << 20
            let session = Session(configuration: testConfiguration())
            let data = try await resumeDataAfterFirstProgress(session, server.url("/range/\(size)"))
            let resumed = session.downloadTask(withResumeData: data)
            resumed.resume()
            let recorded = await record(resumed)
            #expect(recorded.error == nil)
            #expect(recorded.kinds.first == "resumed")
            let (offset, expected) = try #require(recorded.resumedAt)
            #expect(offset > 0)
            #expect(expected == Int64(size))
            #expect(recorded.downloadedFileSize == size)
            #expect(recorded.downloadedFileMatchesPattern == true)
        }
    }

    /// Resume data carries the request's own headers to the resumed request,
    /// but never credentials or cookies: apps store it.
    @Test func resumeData_keepsRequestHeaders_butNoCredentialsOrCookies() async throws {
        try await withServer(timeLimit: 60) { server in
            let size = 64 << 20
            let session = Session(configuration: testConfiguration())
            var request = URLRequest(url: server.url("/range/\(size)"))
            request.setValue("abc", forHTTPHeaderField: "X-Token")
            request.setValue("Basic c2VjcmV0OnB3", forHTTPHeaderField: "Authorization")
            request.setValue("session=s3cr3t", forHTTPHeaderField: "Cookie")
            let task = session.downloadTask(with: request)
            task.resume()
            var resumeData: Data?
            for try await event in task.events {
                if case .downloadProgress = event {
                    resumeData = await task.cancelByProducingResumeData()
                    break
                }
            }
            let data = try #require(resumeData)
            let stored = String(decoding: data, as: UTF8.self)
            #expect(!stored.contains("c2VjcmV0OnB3") && !stored.contains("s3cr3t"))

            let resumed = session.downloadTask(withResumeData: data)
            let sent = try #require(resumed.originalRequest)
            #expect(sent.value(forHTTPHeaderField: "X-Token") == "abc")
            #expect(sent.value(forHTTPHeaderField: "Authorization") == nil)
            #expect(sent.value(forHTTPHeaderField: "Cookie") == nil)
            #expect(sent.value(forHTTPHeaderField: "Range")?.hasPrefix("bytes=") == true)
            resumed.resume()
            let recorded = await record(resumed)
            #expect(recorded.error == nil)
            #expect(recorded.downloadedFileSize == size)
        }
    }

    @Test func resumeAfterTheValidatorChanged_restartsFromZero() async throws {
        try await withServer(timeLimit: 60) { server in
            let size = 256 << 20
            let session = Session(configuration: testConfiguration())
            let resumeData = try await resumeDataAfterFirstProgress(session, server.url("/range/\(size)?etag=first"))
            // The resource changed: the same partial file, another URL whose ETag differs.
            var decoded = try ResumeData.decode(resumeData).get()
            decoded.payload.url = server.url("/range/\(size)?etag=second").absoluteString
            let changed = try #require(decoded.encoded())
            let resumed = session.downloadTask(withResumeData: changed)
            resumed.resume()
            let recorded = await record(resumed)
            #expect(recorded.resumedAt?.0 == 0)
            #expect(recorded.downloadedFileSize == size)
            #expect(recorded.downloadedFileMatchesPattern == true)
        }
    }

    @Test func connectionDroppedMidDownload_carriesResumeData_andResumingFinishesTheFile() async throws {
        try await withServer(timeLimit: 60) { server in
            let size = 3_000_000
            let session = Session(configuration: testConfiguration())
            let task = session.downloadTask(with: server.url("/range/\(size)?dropAfter=1000000"))
            task.resume()
            let recorded = await record(task)
            let error = try #require(recorded.error as? URLError)
            #expect(error.code == .networkConnectionLost)
            let resumeData = try #require(error.downloadTaskResumeData, "a network failure after bytes keeps the file")
            let (location, response) = try await session.download(resumeFrom: resumeData)
            defer { try? FileManager.default.removeItem(at: location) }
            #expect((response as? HTTPURLResponse)?.statusCode == 206)
            #expect(fileSize(location) == size)
            #expect(fileMatchesPattern(location))
        }
    }

    @Test func failureBeforeAnyByte_hasNoResumeData() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).downloadTask(with: server.url("/range/1000?dropAfter=0"))
            task.resume()
            let recorded = await record(task)
            #expect((recorded.error as? URLError)?.downloadTaskResumeData == nil)
        }
    }

    @Test func tamperedResumeData_isRefused() async throws {
        try await withServer(timeLimit: 60) { server in
            let session = Session(configuration: testConfiguration())
            let resumeData = try await resumeDataAfterFirstProgress(session, server.url("/range/\(256 << 20)"))
            let good = resumeData
            var flipped = good
            let index = flipped.firstRange(of: Data("bytesReceived".utf8))!.upperBound + 3
            flipped[index] = flipped[index] == UInt8(ascii: "1") ? UInt8(ascii: "2") : UInt8(ascii: "1")

            var escaping = try ResumeData.decode(good).get()
            escaping.payload.fileName = "../../etc/passwd"
            var missing = try ResumeData.decode(good).get()
            missing.payload.fileName = "download-does-not-exist.tmp"
            // Well-formed and checksummed, but unusable: no If-Range validator,
            // a negative length, a URL that is not http(s).
            var noValidator = try ResumeData.decode(good).get()
            noValidator.payload.entityTag = nil
            noValidator.payload.lastModified = nil
            var negative = try ResumeData.decode(good).get()
            negative.payload.bytesReceived = -1
            var local = try ResumeData.decode(good).get()
            local.payload.url = "file:///etc/passwd"
            let candidates: [(String, Data)] = [
                ("garbage", Data("not resume data".utf8)),
                ("edited", flipped),
                ("other version", Data(String(decoding: good, as: UTF8.self)
                    .replacingOccurrences(of: "\"version\":1", with: "\"version\":99").utf8)),
                ("outside the folder", try #require(escaping.encoded())),
                ("missing file", try #require(missing.encoded())),
                ("no validator", try #require(noValidator.encoded())),
                ("negative length", try #require(negative.encoded())),
                ("file URL", try #require(local.encoded())),
            ]
            // The error says what is wrong with it.
            let reasons = ["no validator": "no validator", "negative length": "negative length", "file URL": "not an http(s) URL"]
            for (label, data) in candidates {
                let refused = session.downloadTask(withResumeData: data)
                refused.resume()
                let recorded = await record(refused)
                #expect(recorded.error != nil, "\(label) resume data must be refused")
                #expect(recorded.kinds.isEmpty || recorded.kinds == ["metrics"], "\(label): nothing is transferred")
                if let reason = reasons[label] {
                    let message = (recorded.error as? URLError)?.localizedDescription ?? ""
                    #expect(message.contains(reason), "\(label): \(message)")
                }
            }
            // The untouched resume data is still good: the refusals above were
            // about the edits. (Finishing it also removes its partial file,
            // which every run of this test used to leave behind.)
            let accepted = session.downloadTask(withResumeData: good)
            accepted.resume()
            let finished = await record(accepted)
            #expect(finished.error == nil)
            #expect(finished.downloadedFileMatchesPattern == true)
            #expect(FileManager.default.fileExists(atPath: "/etc/passwd"))
        }
    }

    /// Answered after the whole body arrived: the queued body is written
    /// out before `downloaded` is handed over (outside the task's lock).
    @Test func becomeDownload_afterTheWholeBodyArrived_writesItAllFirst() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/bytes/200000"))
            task.resume()
            var file: Data?
            var sawData = false
            for try await event in task.events {
                switch event {
                case .response(_, let decision):
                    // The 200,000 bytes fit the stream buffer: wait until
                    // the transfer has ended before answering (by time, not
                    // a count of naps, which a busy machine outruns).
                    let deadline = ContinuousClock.now + .seconds(scaledTimeout(30))
                    while task.countOfBytesReceived < 200_000, ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(5))
                    }
                    try await Task.sleep(for: .milliseconds(50))
                    decision.becomeDownload()
                case .data: sawData = true
                case .downloaded(let url): file = try Data(contentsOf: url)
                default: break
                }
            }
            #expect(!sawData)
            #expect(task.kind == .download)
            #expect(file == LoopbackServer.patternBody(count: 200_000))
        }
    }

    @Test func becomeDownload_sendsTheRestOfTheBodyToAFile() async throws {
        try await withServer { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/bytes/1000000"))
            task.resume()
            var file: Data?
            var sawData = false
            for try await event in task.events {
                switch event {
                case .response(_, let decision): decision.becomeDownload()
                case .data: sawData = true
                case .downloaded(let url): file = try Data(contentsOf: url)
                default: break
                }
            }
            #expect(!sawData, "after becomeDownload the body goes to the file only")
            #expect(task.kind == .download)
            #expect(file == LoopbackServer.patternBody(count: 1_000_000))
        }
    }
}
}
