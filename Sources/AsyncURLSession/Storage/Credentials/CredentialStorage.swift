import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Credentials kept per protection space, as `URLCredentialStorage`: what
/// challenges are answered with by default handling, and where answers with
/// `.permanent` persistence go.
///
/// `.shared` is what `.default` configurations use: it keeps its credentials
/// in `$XDG_DATA_HOME/AsyncURLSession/credentials.json` (else
/// `~/.local/share/...`), a 0600 file in a 0700 folder, replaced atomically
/// about a second after a change or at `flush()`. The passwords are in that
/// file as they are: it is protected by its mode, like an SSH key, not
/// encrypted. An `.ephemeral` configuration gets a storage of its own that
/// lives in memory only. `.forSession` answers are kept by the session, not
/// here; `.none` ones nowhere.
public final class CredentialStorage: Sendable {
    /// The storage of every `.default` configuration, kept on disk.
    public static let shared = CredentialStorage(file: CredentialFile.defaultURL.map(CredentialFile.init))

    private let file: CredentialFile?
    private let state = Mutex(State())
    private let saving = SaveSchedule()

    struct State {
        var entries: [ProtectionSpaceKey: Entry] = [:]
        var fileProblem: String?
    }

    struct Entry: Sendable {
        var credentials: [String: URLCredential] = [:]
        var defaultUser: String?
    }

    /// A storage in memory only.
    public convenience init() {
        self.init(file: nil)
    }

    /// A storage kept in `file` (0600; its folder 0700). A file that is not a
    /// private file of ours, or that does not decode, is refused and left
    /// alone: the storage starts empty and `fileProblem` says why.
    public convenience init(persistingTo file: URL) {
        self.init(file: CredentialFile(url: file))
    }

    init(file: CredentialFile?) {
        self.file = file
        guard let file else { return }
        switch file.load() {
        case .success(let loaded):
            state.withLock { $0.entries = loaded }
        case .failure(let error):
            state.withLock { $0.fileProblem = "The credential file was not loaded: \(error.reason)." }
        }
    }

    /// Why the storage's file could not be read or written, if it could not.
    public var fileProblem: String? { state.withLock { $0.fileProblem } }

    /// The credentials for `space`, by user name.
    public func credentials(for space: URLProtectionSpace) -> [String: URLCredential] {
        state.withLock { $0.entries[ProtectionSpaceKey(space)]?.credentials ?? [:] }
    }

    /// Every space with credentials, and its credentials by user name.
    public var allCredentials: [URLProtectionSpace: [String: URLCredential]] {
        let entries = state.withLock { $0.entries }
        var result: [URLProtectionSpace: [String: URLCredential]] = [:]
        for (key, entry) in entries where !entry.credentials.isEmpty { result[key.space] = entry.credentials }
        return result
    }

    /// Keeps `credential` for `space` (one per user name). `.none` ones are
    /// not kept, as Apple's storage does not keep them.
    public func set(_ credential: URLCredential, for space: URLProtectionSpace) {
        guard credential.persistence != .none, let user = credential.user else { return }
        state.withLock { $0.entries[ProtectionSpaceKey(space), default: Entry()].credentials[user] = credential }
        scheduleSave()
    }

    public func remove(_ credential: URLCredential, for space: URLProtectionSpace) {
        guard let user = credential.user else { return }
        state.withLock { state in
            let key = ProtectionSpaceKey(space)
            state.entries[key]?.credentials[user] = nil
            if state.entries[key]?.defaultUser == user { state.entries[key]?.defaultUser = nil }
            if state.entries[key]?.credentials.isEmpty == true { state.entries[key] = nil }
        }
        scheduleSave()
    }

    /// The credential default handling answers a challenge for `space` with:
    /// the one set as default, else the only one kept for it.
    public func defaultCredential(for space: URLProtectionSpace) -> URLCredential? {
        state.withLock { state in
            guard let entry = state.entries[ProtectionSpaceKey(space)] else { return nil }
            if let user = entry.defaultUser, let credential = entry.credentials[user] { return credential }
            return entry.credentials.count == 1 ? entry.credentials.values.first : nil
        }
    }

    /// Keeps `credential` and makes it the default for `space`.
    public func setDefaultCredential(_ credential: URLCredential, for space: URLProtectionSpace) {
        guard let user = credential.user else { return }
        state.withLock { state in
            let key = ProtectionSpaceKey(space)
            state.entries[key, default: Entry()].credentials[user] = credential
            state.entries[key]?.defaultUser = user
        }
        scheduleSave()
    }

    public func removeAll() {
        state.withLock { $0.entries.removeAll() }
        scheduleSave()
    }

    /// Writes the file now (for a storage kept on disk).
    public func flush() {
        guard let file else { return }
        saving.writing()
        let entries = state.withLock { $0.entries }
        let problem = file.save(entries)
        state.withLock { $0.fileProblem = problem.map { "The credential file was not written: \($0)." } }
    }

    private func scheduleSave() {
        guard file != nil else { return }
        saving.request { [self] in flush() }
    }
}
