import Foundation
import LoopbackServer
import Testing

@testable import AsyncURLSession

/// Partial downloads nobody came back for are removed from the download
/// folder after `StaleDownloadSweep.lifetime`, and nothing else is.
@Suite struct StaleDownloadSweepTests {
    /// Two days: older than the lifetime by a day.
    private static let stale = Date().addingTimeInterval(-2 * 24 * 60 * 60)

    /// A fresh download folder for one test, removed at the end.
    private static func withFolder<T>(_ body: (URL) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("StaleDownloadSweepTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await body(folder)
    }

    /// A file with `contents`, last written at `modified`.
    private static func plant(_ name: String, in folder: URL, modified: Date, contents: String = "partial") throws -> URL {
        let url = folder.appendingPathComponent(name)
        try Data(contents.utf8).write(to: url)
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: url.path)
        return url
    }

    private static func exists(_ url: URL) -> Bool {
        var info = stat()
        return lstat(url.path, &info) == 0
    }

    @Test func sweep_removesOnlyStaleFilesOfOurs() async throws {
        try await Self.withFolder { folder in
            let stalePartial = try Self.plant("download-stale.tmp", in: folder, modified: Self.stale)
            let freshPartial = try Self.plant("download-fresh.tmp", in: folder, modified: Date())
            let otherName = try Self.plant("notes.txt", in: folder, modified: Self.stale)
            // A link named like ours, to an old file outside the folder: neither goes.
            let outside = FileManager.default.temporaryDirectory.appendingPathComponent("sweep-victim-\(UUID().uuidString)")
            try Data("keep me".utf8).write(to: outside)
            try FileManager.default.setAttributes([.modificationDate: Self.stale], ofItemAtPath: outside.path)
            defer { try? FileManager.default.removeItem(at: outside) }
            let link = folder.appendingPathComponent("download-link.tmp")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: outside)
            // A folder named like ours is not a download either.
            let subfolder = folder.appendingPathComponent("download-folder.tmp")
            try FileManager.default.createDirectory(at: subfolder, withIntermediateDirectories: false)
            try FileManager.default.setAttributes([.modificationDate: Self.stale], ofItemAtPath: subfolder.path)

            let removed = StaleDownloadSweep.sweep(folder, modifiedBefore: Date().addingTimeInterval(-StaleDownloadSweep.lifetime))

            #expect(removed == ["download-stale.tmp"])
            #expect(!Self.exists(stalePartial))
            #expect(Self.exists(freshPartial))
            #expect(Self.exists(otherName))
            #expect(Self.exists(link))
            #expect(try Data(contentsOf: outside) == Data("keep me".utf8))
            #expect(Self.exists(subfolder))
        }
    }

    @Test func reopenedPartialFile_isFreshAgain_andSurvivesASweep() async throws {
        try await Self.withFolder { folder in
            let directory = DownloadDirectory(url: folder)
            let partial = try Self.plant("download-resumed.tmp", in: folder, modified: Self.stale)
            guard case .success(let file) = directory.reopen(name: "download-resumed.tmp", expectedSize: 7) else {
                Issue.record("the partial file was not reopened")
                return
            }
            file.close()
            StaleDownloadSweep.sweep(folder, modifiedBefore: Date().addingTimeInterval(-StaleDownloadSweep.lifetime))
            #expect(Self.exists(partial), "a partial file taken up again is not stale")
        }
    }

    /// End to end: a download through the public API sweeps its folder, in
    /// the background, of the partial file an earlier cancelled download left.
    @Test func download_sweepsAStalePartialFileFromItsFolder() async throws {
        try await Self.withFolder { folder in
            let stalePartial = try Self.plant("download-abandoned.tmp", in: folder, modified: Self.stale)
            let freshPartial = try Self.plant("download-recent.tmp", in: folder, modified: Date())
            try await withServer { server in
                var configuration = testConfiguration()
                configuration.downloadDirectory = folder
                let (file, response) = try await Session(configuration: configuration).download(for: URLRequest(url: server.url("/bytes/5000")))
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                #expect(try Data(contentsOf: file) == LoopbackServer.patternBody(count: 5000))
                // The sweep runs on a utility queue: give it a bounded while.
                try await eventually { !Self.exists(stalePartial) }
                #expect(!Self.exists(stalePartial))
                #expect(Self.exists(freshPartial))
                #expect(Self.exists(file), "the file just downloaded is the caller's")
            }
        }
    }
}
