import Foundation
import Testing

@testable import AsyncURLSession

/// The download folder refuses what someone else could have planted in a
/// shared temporary directory, and resume data cannot point it at a file it
/// did not make.
@Suite struct DownloadDirectoryTests {
    /// A fresh scratch folder for one test, removed at the end.
    private static func withScratch(_ body: (URL) throws -> Void) throws {
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("DownloadDirectoryTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: scratch) }
        try body(scratch)
    }

    @Test func symbolicLinkInPlaceOfTheFolder_isRefused() throws {
        try Self.withScratch { scratch in
            let target = scratch.appendingPathComponent("elsewhere")
            try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
            let planted = scratch.appendingPathComponent("downloads")
            try FileManager.default.createSymbolicLink(at: planted, withDestinationURL: target)
            let error = DownloadDirectory(url: planted).prepare()
            #expect(error?.code == .cannotCreateFile)
            #expect(error?.localizedDescription.contains("is not a directory") == true)
        }
    }

    @Test func regularFileInPlaceOfTheFolder_isRefused() throws {
        try Self.withScratch { scratch in
            let planted = scratch.appendingPathComponent("downloads")
            #expect(FileManager.default.createFile(atPath: planted.path, contents: Data("x".utf8)))
            guard case .failure(let error) = DownloadDirectory(url: planted).createFile() else {
                Issue.record("a file was created under a regular file")
                return
            }
            #expect(error.code == .cannotCreateFile)
        }
    }

    @Test func groupOrWorldAccess_isTakenAway() throws {
        try Self.withScratch { scratch in
            let folder = scratch.appendingPathComponent("downloads")
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o777])
            #expect(DownloadDirectory(url: folder).prepare() == nil)
            let mode = try FileManager.default.attributesOfItem(atPath: folder.path)[.posixPermissions] as? Int
            #expect(mode == 0o700)
        }
    }

    /// (The NUL case is spelled out in the body: as an argument it would be
    /// printed into the test log.)
    @Test(arguments: ["", ".", "..", "../outside", "a/b", "a name with a NUL"])
    func resumeDataNamingAnotherPlace_isRefused(name: String) throws {
        let name = name == "a name with a NUL" ? "download-\u{0}.tmp" : name
        try Self.withScratch { scratch in
            let directory = DownloadDirectory(url: scratch.appendingPathComponent("downloads"))
            guard case .failure(let error) = directory.reopen(name: name, expectedSize: 0) else {
                Issue.record("reopened \(name.debugDescription)")
                return
            }
            #expect(error.code == .cannotDecodeRawData)
        }
    }

    @Test func resumeDataNamingALink_isRefused() throws {
        try Self.withScratch { scratch in
            let directory = DownloadDirectory(url: scratch.appendingPathComponent("downloads"))
            #expect(directory.prepare() == nil)
            let victim = scratch.appendingPathComponent("victim")
            #expect(FileManager.default.createFile(atPath: victim.path, contents: Data("keep me".utf8)))
            try FileManager.default.createSymbolicLink(
                at: directory.url.appendingPathComponent("download-link.tmp"), withDestinationURL: victim)
            guard case .failure(let error) = directory.reopen(name: "download-link.tmp", expectedSize: 0) else {
                Issue.record("reopened a symbolic link")
                return
            }
            #expect(error.code == .cannotOpenFile)
            #expect(try Data(contentsOf: victim) == Data("keep me".utf8), "the link's target is untouched")
        }
    }

    @Test func partialFileShorterThanTheResumeDataSays_isRefused() throws {
        try Self.withScratch { scratch in
            let directory = DownloadDirectory(url: scratch.appendingPathComponent("downloads"))
            guard case .success(let file) = directory.createFile() else {
                Issue.record("no download file")
                return
            }
            file.close()
            guard case .failure(let error) = directory.reopen(name: file.name, expectedSize: 10) else {
                Issue.record("reopened a file shorter than expected")
                return
            }
            #expect(error.code == .cannotOpenFile)
        }
    }
}
