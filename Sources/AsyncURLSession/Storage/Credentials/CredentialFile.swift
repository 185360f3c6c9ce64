import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A credential storage's contents in a JSON file of ours (see
/// `StorageLocation` for how it is written and what is refused on reading).
struct CredentialFile: Sendable {
    let url: URL

    static let maximumSize = 4 << 20

    static var defaultURL: URL? { StorageLocation.defaultFolder?.appendingPathComponent("credentials.json") }

    private struct Record: Codable {
        var space: ProtectionSpaceKey
        var user: String
        var password: String
        var isDefault: Bool
    }

    func load() -> Result<[ProtectionSpaceKey: CredentialStorage.Entry], StorageFileError> {
        switch StorageLocation.readPrivateFile(url, limit: Self.maximumSize) {
        case .failure(let error):
            return .failure(error)
        case .success(nil):
            return .success([:])
        case .success(let data?):
            guard let records = try? JSONDecoder().decode([Record].self, from: data) else {
                return .failure(StorageFileError("\(url.path) is not a credential file of this library (it does not decode)"))
            }
            var entries: [ProtectionSpaceKey: CredentialStorage.Entry] = [:]
            for record in records {
                entries[record.space, default: CredentialStorage.Entry()].credentials[record.user] =
                    URLCredential(user: record.user, password: record.password, persistence: .permanent)
                if record.isDefault { entries[record.space]?.defaultUser = record.user }
            }
            return .success(entries)
        }
    }

    /// Writes the `.permanent` credentials; returns why it could not.
    func save(_ entries: [ProtectionSpaceKey: CredentialStorage.Entry]) -> String? {
        if let problem = StorageLocation.prepare(url.deletingLastPathComponent()) { return problem }
        var records: [Record] = []
        for (space, entry) in entries {
            for (user, credential) in entry.credentials
            where credential.persistence == .permanent {
                records.append(Record(
                    space: space, user: user, password: credential.password ?? "", isDefault: entry.defaultUser == user))
            }
        }
        guard let data = try? JSONEncoder().encode(records) else { return "cannot encode the credentials" }
        return StorageLocation.writeAtomically(data, to: url)
    }
}
