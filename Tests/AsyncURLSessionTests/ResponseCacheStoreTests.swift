import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@testable import AsyncURLSession

/// The cache's two halves without a network: capacities, eviction, and the
/// SQLite file (persistence, permissions, damaged and hostile files).
@Suite struct ResponseCacheStoreTests {
    private func response(_ path: String, body: Int = 100, fields: [String: String] = ["Cache-Control": "max-age=600"]) -> (CachedResponse, URLRequest) {
        let url = URL(string: "http://example.test\(path)")!
        let http = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: fields)!
        return (CachedResponse(response: http, data: Data(repeating: 7, count: body)), URLRequest(url: url))
    }

    private func temporaryFolder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("cache-test-\(UUID().uuidString)")
    }

    @Test func memory_evictsTheLeastRecentlyUsedFirst() {
        let cache = ResponseCache(memoryCapacity: 20_000)
        let (a, requestA) = response("/a", body: 700)
        let (b, requestB) = response("/b", body: 700)
        cache.storeCachedResponse(a, for: requestA)
        cache.storeCachedResponse(b, for: requestB)
        _ = cache.cachedResponse(for: requestA)  // b is now the older
        for index in 0..<30 {
            let (other, request) = response("/other\(index)", body: 700)
            cache.storeCachedResponse(other, for: request)
            _ = cache.cachedResponse(for: requestA)
        }
        #expect(cache.cachedResponse(for: requestA) != nil)
        #expect(cache.cachedResponse(for: requestB) == nil)
        #expect(cache.currentMemoryUsage <= 20_000)
    }

    @Test func responseLargerThanATwentiethOfTheCapacity_isNotKept() {
        let cache = ResponseCache(memoryCapacity: 20_000)
        let (big, request) = response("/big", body: 5_000)
        cache.storeCachedResponse(big, for: request)
        #expect(cache.cachedResponse(for: request) == nil)
    }

    @Test func fragment_isIgnoredInTheKey() {
        let cache = ResponseCache(memoryCapacity: 1 << 20)
        let (stored, _) = response("/page")
        cache.storeCachedResponse(stored, for: URLRequest(url: URL(string: "http://example.test/page#one")!))
        #expect(cache.cachedResponse(for: URLRequest(url: URL(string: "http://example.test/page#two")!)) != nil)
    }

    @Test func disk_keepsResponsesAcrossCacheInstances() {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (stored, request) = response("/kept", body: 1000)
        let first = ResponseCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: folder)
        first.storeCachedResponse(stored, for: request)
        first.flush()
        let second = ResponseCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: folder)
        let found = second.cachedResponse(for: request)
        #expect(found?.data == stored.data)
        #expect(found?.statusCode == 200)
        #expect(found?.response.value(forHTTPHeaderField: "Cache-Control") == "max-age=600")
        #expect(second.fileProblem == nil)
    }

    @Test func disk_fileIsPrivate_inAPrivateFolder() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = ResponseCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: folder)
        let (stored, request) = response("/private")
        cache.storeCachedResponse(stored, for: request)
        cache.flush()
        let folderMode = try FileManager.default.attributesOfItem(atPath: folder.path)[.posixPermissions] as? Int
        let fileMode = try FileManager.default.attributesOfItem(
            atPath: folder.appendingPathComponent("Responses.sqlite").path)[.posixPermissions] as? Int
        #expect(folderMode == 0o700)
        #expect(fileMode == 0o600)
    }

    @Test func disk_allowedInMemoryOnly_neverReachesTheFile() {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var (stored, request) = response("/memory-only")
        stored.storagePolicy = .allowedInMemoryOnly
        let first = ResponseCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: folder)
        first.storeCachedResponse(stored, for: request)
        first.flush()
        #expect(first.cachedResponse(for: request) != nil)
        let second = ResponseCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: folder)
        #expect(second.cachedResponse(for: request) == nil)
    }

    @Test func disk_damagedFile_isStartedAfresh_andSaysSo() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let file = folder.appendingPathComponent("Responses.sqlite")
        _ = FileManager.default.createFile(
            atPath: file.path, contents: Data(repeating: 0x41, count: 8192), attributes: [.posixPermissions: 0o600])
        let cache = ResponseCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: folder)
        let (stored, request) = response("/after-damage")
        cache.storeCachedResponse(stored, for: request)
        cache.flush()
        #expect(cache.fileProblem?.contains("started afresh") == true, "\(cache.fileProblem ?? "no problem")")
        let reopened = ResponseCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: folder)
        #expect(reopened.cachedResponse(for: request)?.data == stored.data)
    }

    @Test func disk_symlinkInPlaceOfTheFile_isRefused() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let target = folder.appendingPathComponent("elsewhere")
        _ = FileManager.default.createFile(atPath: target.path, contents: Data("keep me".utf8))
        try FileManager.default.createSymbolicLink(
            at: folder.appendingPathComponent("Responses.sqlite"), withDestinationURL: target)
        let cache = ResponseCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: folder)
        let (stored, request) = response("/link")
        cache.storeCachedResponse(stored, for: request)
        cache.flush()
        #expect(cache.fileProblem?.contains("not a regular file") == true)
        #expect(try Data(contentsOf: target) == Data("keep me".utf8))
    }

    @Test func disk_evictsDownToItsCapacity() {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = ResponseCache(memoryCapacity: 0, diskCapacity: 40_000, directory: folder)
        for index in 0..<40 {
            let (stored, request) = response("/n\(index)", body: 1500)
            cache.storeCachedResponse(stored, for: request)
        }
        cache.flush()
        #expect(cache.currentDiskUsage <= 40_000)
        #expect(cache.cachedResponse(for: response("/n39").1) != nil)
        #expect(cache.cachedResponse(for: response("/n0").1) == nil)
    }

    // Stores are written behind in batches (`CacheDiskStore`): what
    // reaches the file must still be what was asked for last.

    private func response(_ path: String, filledWith byte: UInt8) -> (CachedResponse, URLRequest) {
        let url = URL(string: "http://example.test\(path)")!
        let http = HTTPURLResponse(
            url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Cache-Control": "max-age=600"])!
        return (CachedResponse(response: http, data: Data(repeating: byte, count: 500)), URLRequest(url: url))
    }

    @Test func disk_manyStoresOfOneURL_leaveTheLastOnDisk() {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = ResponseCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: folder)
        for byte in UInt8(1)...200 {
            let (stored, request) = response("/polled", filledWith: byte)
            first.storeCachedResponse(stored, for: request)
        }
        first.flush()
        let second = ResponseCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: folder)
        #expect(second.cachedResponse(for: response("/polled", filledWith: 0).1)?.data.first == 200)
    }

    @Test func disk_aRemoveBetweenStores_keepsTheirOrder() {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = ResponseCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: folder)
        let (a, request) = response("/x", filledWith: 1)
        let (b, _) = response("/x", filledWith: 2)
        let (gone, goneRequest) = response("/gone", filledWith: 3)
        first.storeCachedResponse(a, for: request)
        first.storeCachedResponse(gone, for: goneRequest)
        first.removeCachedResponse(for: request)
        first.removeCachedResponse(for: goneRequest)
        first.storeCachedResponse(b, for: request)
        first.flush()
        let second = ResponseCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: folder)
        #expect(second.cachedResponse(for: request)?.data.first == 2)
        #expect(second.cachedResponse(for: goneRequest) == nil)
    }

    @Test func disk_aBurstOfURLs_allReachTheFile() {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = ResponseCache(memoryCapacity: 0, diskCapacity: 1 << 22, directory: folder)
        for index in 0..<300 {
            let (stored, request) = response("/burst\(index)", filledWith: UInt8(index % 250 + 1))
            first.storeCachedResponse(stored, for: request)
        }
        first.flush()
        let second = ResponseCache(memoryCapacity: 0, diskCapacity: 1 << 22, directory: folder)
        let missing = (0..<300).filter { index in
            second.cachedResponse(for: response("/burst\(index)", filledWith: 0).1)?.data.first != UInt8(index % 250 + 1)
        }
        #expect(missing.isEmpty, "not on disk: \(missing.prefix(10))")
    }

    @Test func removeCachedResponsesSince_removesOnlyNewerOnes() {
        let cache = ResponseCache(memoryCapacity: 1 << 20)
        let (old, oldRequest) = response("/old")
        cache.storeCachedResponse(old, for: oldRequest)
        let cut = Date().addingTimeInterval(0.01)
        Thread.sleep(forTimeInterval: 0.02)
        let (new, newRequest) = response("/new")
        cache.storeCachedResponse(new, for: newRequest)
        cache.removeCachedResponses(since: cut)
        #expect(cache.cachedResponse(for: oldRequest) != nil)
        #expect(cache.cachedResponse(for: newRequest) == nil)
    }
}
