import Foundation
import Testing

@testable import AsyncURLSession

#if canImport(Glibc)
import Glibc
#endif

/// A jar kept on disk: what is written, how, and what is refused on reading.
@Suite struct CookieFileTests {
    private func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("cookie-file-\(UUID().uuidString)/inner")
        return url
    }

    private func mode(_ path: String) -> mode_t {
        var info = stat()
        _ = lstat(path, &info)
        return info.st_mode & 0o777
    }

    @Test func persistentCookies_surviveTheJar_sessionCookiesDoNot() throws {
        let file = try folder().appendingPathComponent("cookies.json")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent().deletingLastPathComponent()) }
        let url = URL(string: "https://example.org/")!
        do {
            let jar = CookieJar(persistingTo: file)
            jar.storeCookies(fromSetCookieFields: ["kept=1; Max-Age=3600", "session=2"], for: url)
            jar.flush()
            #expect(jar.fileProblem == nil)
        }
        #expect(mode(file.path) == 0o600)
        #expect(mode(file.deletingLastPathComponent().path) == 0o700)
        let reopened = CookieJar(persistingTo: file)
        #expect(reopened.cookies(for: url).map(\.name) == ["kept"])
    }

    @Test func changes_areWrittenWithoutAFlush() async throws {
        let file = try folder().appendingPathComponent("cookies.json")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent().deletingLastPathComponent()) }
        let jar = CookieJar(persistingTo: file)
        jar.storeCookies(fromSetCookieFields: ["later=1; Max-Age=3600"], for: URL(string: "https://example.org/")!)
        try await eventually { FileManager.default.fileExists(atPath: file.path) }
        #expect(CookieJar(persistingTo: file).cookies.map(\.name) == ["later"])
    }

    @Test func corruptFile_isRefusedAndLeftAlone() throws {
        let folder = try folder()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let file = folder.appendingPathComponent("cookies.json")
        _ = FileManager.default.createFile(atPath: file.path, contents: Data("not json".utf8), attributes: [.posixPermissions: 0o600])
        let jar = CookieJar(persistingTo: file)
        #expect(jar.cookies.isEmpty)
        #expect(jar.fileProblem?.contains("does not decode") == true)
        #expect(try Data(contentsOf: file) == Data("not json".utf8))
    }

    @Test func fileOthersCanRead_orALink_isRefused() throws {
        let folder = try folder()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let open = folder.appendingPathComponent("open.json")
        _ = FileManager.default.createFile(atPath: open.path, contents: Data("[]".utf8), attributes: [.posixPermissions: 0o644])
        #expect(CookieJar(persistingTo: open).fileProblem?.contains("other users") == true)
        let link = folder.appendingPathComponent("link.json")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: open)
        #expect(CookieJar(persistingTo: link).fileProblem != nil)
    }

    @Test func tamperedEntry_forAPublicSuffix_isDropped() throws {
        let folder = try folder()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let file = folder.appendingPathComponent("cookies.json")
        let future = Date().timeIntervalSince1970 + 3600
        let json = """
            [{"name":"evil","value":"1","domain":"com","hostOnly":false,"path":"/","secure":false,"httpOnly":false,\
            "expires":\(future),"created":0},\
            {"name":"fine","value":"1","domain":"example.com","hostOnly":false,"path":"/","secure":false,"httpOnly":false,\
            "expires":\(future),"created":0}]
            """
        _ = FileManager.default.createFile(atPath: file.path, contents: Data(json.utf8), attributes: [.posixPermissions: 0o600])
        #expect(CookieJar(persistingTo: file).cookies.map(\.name) == ["fine"])
    }
}
