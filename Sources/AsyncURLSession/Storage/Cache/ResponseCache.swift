import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A private HTTP cache (RFC 9111), as `URLCache`: responses in memory up
/// to `memoryCapacity` bytes and, for a cache with a directory, in an SQLite
/// file up to `diskCapacity` bytes, the least recently used going first.
/// Sessions consult it through `SessionConfiguration.responseCache`; you can
/// also read, store and remove responses yourself.
///
/// What is stored: final responses to GET requests that RFC 9111 lets a
/// private cache keep and that can be reused (fresh for a while, or with a
/// validator to revalidate them with), whose size is at most a twentieth of
/// a capacity (as URLCache). Keyed by URL (fragment ignored); one response
/// per URL, matched against the request's Vary fields.
public final class ResponseCache: Sendable {
    /// The cache of `.default` sessions: 4 MiB in memory, 20 MiB on disk in
    /// `$XDG_CACHE_HOME/AsyncURLSession/Responses.sqlite` (else
    /// `~/.cache/AsyncURLSession/`), memory only when neither is set.
    public static let shared = ResponseCache(
        memoryCapacity: 4 << 20, diskCapacity: 20 << 20, directory: defaultDirectory)

    static var defaultDirectory: URL? { userCacheFolder?.appendingPathComponent("AsyncURLSession") }

    /// The user's cache folder: `$XDG_CACHE_HOME`, else `~/.cache`.
    public static var userCacheFolder: URL? { StorageLocation.userFolder("XDG_CACHE_HOME", else: ".cache") }

    private struct MemoryEntry {
        var response: CachedResponse
        var lastUse: UInt64
    }

    private struct State {
        var memoryCapacity: Int
        var diskCapacity: Int
        var memory: [String: MemoryEntry] = [:]
        var memoryUsage = 0
        var clock: UInt64 = 0
        /// The rows on disk, their sizes and last uses, known once the file is opened.
        var disk: [String: DiskRow] = [:]
        var diskUsage = 0
        var diskIndexed = false
        var fileProblem: String?
    }

    private struct DiskRow {
        var size: Int
        var lastUse: UInt64
    }

    private let state: Mutex<State>
    private let diskStore: CacheDiskStore?

    /// - Parameters:
    ///   - memoryCapacity: bytes the memory half may hold.
    ///   - diskCapacity: bytes the disk half may hold (0: none).
    ///   - directory: where the disk half lives (created 0700; the file is
    ///     0600); nil keeps everything in memory.
    public init(memoryCapacity: Int, diskCapacity: Int = 0, directory: URL? = nil) {
        state = Mutex(State(memoryCapacity: max(0, memoryCapacity), diskCapacity: max(0, diskCapacity)))
        diskStore = directory.map { CacheDiskStore(file: $0.appendingPathComponent("Responses.sqlite")) }
    }

    // MARK: - Capacities

    public var memoryCapacity: Int {
        get { state.withLock { $0.memoryCapacity } }
        set {
            state.withLock { state in
                state.memoryCapacity = max(0, newValue)
                Self.evictMemory(&state)
            }
        }
    }

    public var diskCapacity: Int {
        get { state.withLock { $0.diskCapacity } }
        set {
            state.withLock { $0.diskCapacity = max(0, newValue) }
            evictDisk()
        }
    }

    public var currentMemoryUsage: Int { state.withLock { $0.memoryUsage } }

    public var currentDiskUsage: Int {
        indexDiskIfNeeded()
        return state.withLock { $0.diskUsage }
    }

    /// Why the disk half is off or was started afresh, if it was.
    public var fileProblem: String? { state.withLock { $0.fileProblem } }

    /// The largest response either half keeps (a twentieth of its capacity).
    var maximumEntrySize: Int {
        state.withLock { max($0.memoryCapacity, diskStore == nil ? 0 : $0.diskCapacity) / 20 }
    }

    // MARK: - Reading and writing

    /// The URL without its fragment (cut from the string: URLComponents
    /// would cost more than the rest of a lookup).
    static func key(for url: URL) -> String {
        let text = url.absoluteString
        guard let hash = text.utf8.firstIndex(of: UInt8(ascii: "#")) else { return text }
        return String(text[..<hash])
    }

    /// The stored response for `request`'s URL if its Vary fields match the
    /// request, fresh or not (see `CacheRules` for what a task does with it).
    public func cachedResponse(for request: URLRequest) -> CachedResponse? {
        guard let url = request.url, let stored = storedResponse(forKey: Self.key(for: url)) else { return nil }
        return CacheRules.varyMatches(stored, request) ? stored : nil
    }

    /// What is stored for `key`, whatever the request's Vary fields. Costs
    /// a lock and a dictionary lookup when nothing is (the disk is read
    /// only for a key its index holds).
    func storedResponse(forKey key: String) -> CachedResponse? {
        enum Found {
            case memory(CachedResponse)
            case disk
            case nothing
            case unknown  // the disk index is not read yet
        }
        let hasDisk = diskStore != nil
        // One lock for the common answers: in memory, on disk, nowhere.
        let look = { [self] () -> Found in
            state.withLock { state -> Found in
                state.clock += 1
                if var entry = state.memory[key] {
                    entry.lastUse = state.clock
                    state.memory[key] = entry
                    return .memory(entry.response)
                }
                guard hasDisk else { return .nothing }
                guard state.diskIndexed else { return .unknown }
                guard state.disk[key] != nil else { return .nothing }
                state.disk[key]?.lastUse = state.clock
                return .disk
            }
        }
        var found = look()
        if case .unknown = found {
            indexDiskIfNeeded()
            found = look()
        }
        switch found {
        case .memory(let response): return response
        case .nothing, .unknown: return nil
        case .disk: break
        }
        guard let diskStore else { return nil }
        let now = Date()
        let loaded = diskStore.sync({ database in
            (try? database.load(key: key, now: now)) ?? nil
        }, problem: noteProblem) ?? nil
        guard let loaded else {
            forgetDiskRow(key)
            return nil
        }
        keepInMemory(loaded, key: key)
        return loaded
    }

    /// Stores `response` for `request` (replacing what the URL had), in
    /// memory and on disk as its storage policy allows and its size fits.
    public func storeCachedResponse(_ response: CachedResponse, for request: URLRequest) {
        guard let url = request.url, response.storagePolicy != .notAllowed else { return }
        var response = response
        response.varyValues = CacheRules.varyValues(of: response.fields, request: request)
        let key = Self.key(for: url)
        keepInMemory(response, key: key)
        guard response.storagePolicy == .allowed, let diskStore else { return }
        indexDiskIfNeeded()
        let fits = state.withLock { state -> Bool in
            guard response.cost <= state.diskCapacity / 20 else { return false }
            state.diskUsage += response.cost - (state.disk[key]?.size ?? 0)
            state.clock += 1
            state.disk[key] = DiskRow(size: response.cost, lastUse: state.clock)
            return true
        }
        guard fits else {
            removeFromDisk(key)
            return
        }
        diskStore.store(response, key: key, now: Date(), problem: noteProblem)
        evictDisk()
    }

    public func removeCachedResponse(for request: URLRequest) {
        guard let url = request.url else { return }
        remove(key: Self.key(for: url))
    }

    func removeCachedResponse(for url: URL) {
        remove(key: Self.key(for: url))
    }

    public func removeAllCachedResponses() {
        state.withLock { state in
            state.memory = [:]
            state.memoryUsage = 0
            state.disk = [:]
            state.diskUsage = 0
        }
        diskStore?.async({ database in try? database.deleteAll() }, problem: noteProblem)
    }

    /// Removes the responses stored at or after `date`.
    public func removeCachedResponses(since date: Date) {
        state.withLock { state in
            for (key, entry) in state.memory where entry.response.responseDate >= date {
                state.memory[key] = nil
                state.memoryUsage -= entry.response.cost
            }
        }
        guard let diskStore else { return }
        diskStore.async({ database in try? database.delete(storedSince: date) }, problem: noteProblem)
        // The index is rebuilt from the file on next use.
        _ = diskStore.sync({ database in (try? database.rows()) ?? [] }).map { rows in
            state.withLock { state in
                state.disk = [:]
                state.diskUsage = 0
                state.diskIndexed = true
                Self.index(rows, into: &state)
            }
        }
    }

    /// Waits until every change so far is in the file.
    public func flush() {
        diskStore?.drain()
    }

    // MARK: - Internals

    private func remove(key: String) {
        state.withLock { state in
            if let entry = state.memory.removeValue(forKey: key) { state.memoryUsage -= entry.response.cost }
        }
        removeFromDisk(key)
    }

    private func removeFromDisk(_ key: String) {
        guard let diskStore, forgetDiskRow(key) else { return }
        diskStore.async({ database in try? database.delete(key: key) }, problem: noteProblem)
    }

    @discardableResult
    private func forgetDiskRow(_ key: String) -> Bool {
        state.withLock { state in
            guard let row = state.disk.removeValue(forKey: key) else { return false }
            state.diskUsage -= row.size
            return true
        }
    }

    private func keepInMemory(_ response: CachedResponse, key: String) {
        state.withLock { state in
            if let old = state.memory.removeValue(forKey: key) { state.memoryUsage -= old.response.cost }
            guard response.cost <= state.memoryCapacity / 20 else { return }
            state.clock += 1
            state.memory[key] = MemoryEntry(response: response, lastUse: state.clock)
            state.memoryUsage += response.cost
            Self.evictMemory(&state)
        }
    }

    /// Least recently used first, down to nine tenths of the capacity (so
    /// that a full cache does not sort on every store).
    private static func evictMemory(_ state: inout State) {
        guard state.memoryUsage > state.memoryCapacity else { return }
        let target = state.memoryCapacity / 10 * 9
        for (key, entry) in state.memory.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
            guard state.memoryUsage > target else { break }
            state.memory[key] = nil
            state.memoryUsage -= entry.response.cost
        }
    }

    private func evictDisk() {
        guard let diskStore else { return }
        let victims = state.withLock { state -> [String] in
            guard state.diskIndexed, state.diskUsage > state.diskCapacity else { return [] }
            let target = state.diskCapacity / 10 * 9
            var victims: [String] = []
            for (key, row) in state.disk.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
                guard state.diskUsage > target else { break }
                state.disk[key] = nil
                state.diskUsage -= row.size
                victims.append(key)
            }
            return victims
        }
        guard !victims.isEmpty else { return }
        diskStore.async({ database in
            for key in victims { try? database.delete(key: key) }
        }, problem: noteProblem)
    }

    private func indexDiskIfNeeded() {
        guard let diskStore, !state.withLock({ $0.diskIndexed }) else { return }
        let rows = diskStore.sync({ database in (try? database.rows()) ?? [] }, problem: noteProblem) ?? []
        state.withLock { state in
            guard !state.diskIndexed else { return }
            state.diskIndexed = true
            Self.index(rows, into: &state)
        }
        evictDisk()
    }

    /// Rows come least recently used first: their order becomes their clock.
    private static func index(_ rows: [CacheDatabase.Row], into state: inout State) {
        for row in rows where state.disk[row.key] == nil {
            state.clock += 1
            state.disk[row.key] = DiskRow(size: row.size, lastUse: state.clock)
            state.diskUsage += row.size
        }
    }

    private var noteProblem: @Sendable (String) -> Void {
        { [weak self] problem in self?.state.withLock { $0.fileProblem = problem } }
    }
}
