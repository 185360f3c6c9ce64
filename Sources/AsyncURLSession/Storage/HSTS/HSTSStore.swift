import Foundation
import Synchronization

/// The hosts that asked, over https, to be reached only over https
/// (HTTP Strict Transport Security, RFC 6797): a later `http://` request
/// to one of them (or to a subdomain, when it said `includeSubDomains`)
/// is sent as `https://` before anything goes on the wire.
///
/// Learned only from `Strict-Transport-Security` on https responses (a
/// plain-http one is ignored, §8.1), never for an IP address (§8.1.1);
/// `max-age=0` forgets the host. `.default` configurations share
/// `HSTSStore.shared`, kept beside the cookie jar's file
/// (`~/.local/share/AsyncURLSession/hsts.json`, 0600); `.ephemeral` ones
/// get a store in memory of their own.
public final class HSTSStore: Sendable {
    /// The store of `.default` configurations, on disk when a data folder
    /// exists (else in memory).
    public static let shared = HSTSStore(file: StorageLocation.defaultFolder?.appendingPathComponent("hsts.json"))

    private struct Entry: Codable, Sendable {
        var expires: Date
        var includeSubDomains: Bool
    }

    private struct State: Sendable {
        var hosts: [String: Entry] = [:]
        var fileProblem: String?
    }

    private let file: URL?
    private let state = Mutex(State())
    /// Whether any host is known: an empty store costs one load per request.
    private let hasHosts = Atomic<Bool>(false)
    private let saving = SaveSchedule()

    /// The largest file read back (a host entry is some 80 bytes).
    static let maximumFileSize = 4 << 20

    /// A store in memory.
    public convenience init() {
        self.init(file: nil)
    }

    /// A store kept in `file` (JSON, written 0600 about a second after a
    /// change, and by `flush()`). A file that cannot be read leaves the
    /// store empty; `fileProblem` says why.
    public convenience init(persistingTo file: URL) {
        self.init(file: file)
    }

    private init(file: URL?) {
        self.file = file
        guard let file else { return }
        switch StorageLocation.readPrivateFile(file, limit: Self.maximumFileSize) {
        case .success(nil):
            break
        case .success(let data?):
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            guard let hosts = try? decoder.decode([String: Entry].self, from: data) else {
                state.withLock { $0.fileProblem = "The HSTS file was not loaded: \(file.path) does not decode." }
                return
            }
            let now = Date()
            let kept = hosts.filter { host, entry in entry.expires > now && Self.isLearnable(host) }
            state.withLock { $0.hosts = kept }
            hasHosts.store(!kept.isEmpty, ordering: .releasing)
        case .failure(let error):
            state.withLock { $0.fileProblem = "The HSTS file was not loaded: \(error.reason)." }
        }
    }

    /// Why the store's file could not be read or written, if it could not.
    public var fileProblem: String? { state.withLock { $0.fileProblem } }

    /// Whether requests to `host` are upgraded to https now.
    public func isKnown(host: String) -> Bool {
        knownEntry(for: host.lowercased(), now: Date()) != nil
    }

    /// Forgets every host.
    public func removeAll() {
        state.withLock { $0.hosts.removeAll() }
        hasHosts.store(false, ordering: .releasing)
        scheduleSave()
    }

    /// Writes the file now (for a store kept on disk).
    public func flush() {
        guard let file else { return }
        saving.writing()
        let hosts = state.withLock { $0.hosts }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = .sortedKeys
        var problem: String?
        if let folderProblem = StorageLocation.prepare(file.deletingLastPathComponent()) {
            problem = folderProblem
        } else if let data = try? encoder.encode(hosts) {
            problem = StorageLocation.writeAtomically(data, to: file)
        } else {
            problem = "cannot encode the hosts"
        }
        state.withLock { $0.fileProblem = problem.map { "The HSTS file was not written: \($0)." } }
    }

    // MARK: - For tasks

    /// `url` as https when its host is known and it is http; nil otherwise.
    /// Port 80 becomes https's default; another explicit port stays (§8.3).
    func upgraded(_ url: URL) -> URL? {
        guard hasHosts.load(ordering: .acquiring), url.scheme?.lowercased() == "http",
            let host = url.host?.lowercased(), knownEntry(for: host, now: Date()) != nil,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return nil }
        components.scheme = "https"
        if components.port == 80 { components.port = nil }
        return components.url
    }

    /// A `Strict-Transport-Security` value from a response to `url`.
    func note(_ value: String, from url: URL) {
        guard url.scheme?.lowercased() == "https", let host = url.host?.lowercased(), Self.isLearnable(host),
            let policy = StrictTransportSecurity(value)
        else { return }
        let changed = state.withLock { state -> Bool in
            if policy.maxAge == 0 {
                return state.hosts.removeValue(forKey: host) != nil
            }
            let entry = Entry(
                expires: Date().addingTimeInterval(TimeInterval(policy.maxAge)),
                includeSubDomains: policy.includeSubDomains)
            let before = state.hosts[host]
            state.hosts[host] = entry
            // A refresh that moves the expiry by under a minute is not worth a write.
            return before?.includeSubDomains != entry.includeSubDomains
                || abs((before?.expires ?? .distantPast).timeIntervalSince(entry.expires)) > 60
        }
        hasHosts.store(state.withLock { !$0.hosts.isEmpty }, ordering: .releasing)
        if changed { scheduleSave() }
    }

    /// `note` for an https response from `host` (tests of the policy rules).
    package func noteForTesting(_ value: String, host: String) {
        guard let url = URL(string: "https://\(host)/") else { return }
        note(value, from: url)
    }

    private func knownEntry(for host: String, now: Date) -> Entry? {
        state.withLock { state in
            if let entry = state.hosts[host], entry.expires > now { return entry }
            // A superdomain that covers its subdomains (§8.2).
            var rest = Substring(host)
            while let dot = rest.firstIndex(of: ".") {
                rest = rest[rest.index(after: dot)...]
                if let entry = state.hosts[String(rest)], entry.includeSubDomains, entry.expires > now {
                    return entry
                }
            }
            return nil
        }
    }

    /// Names only: never an IP address (§8.1.1), nor an empty name.
    static func isLearnable(_ host: String) -> Bool {
        guard !host.isEmpty, !host.hasPrefix("[") else { return false }
        var address = in_addr()
        if inet_pton(AF_INET, host, &address) == 1 { return false }
        var address6 = in6_addr()
        return inet_pton(AF_INET6, host, &address6) != 1
    }

    private func scheduleSave() {
        guard file != nil else { return }
        saving.request { [self] in flush() }
    }
}
