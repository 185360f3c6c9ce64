import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Apple's `URLCredentialStorage`, backed by an async core
/// `CredentialStorage`, so credentials set here answer challenges by
/// default handling and `.permanent` answers land here. In a file that
/// imports `URLSessionCompat` this class shadows FoundationNetworking's.
open class URLCredentialStorage: NSObject, @unchecked Sendable {
    // @unchecked: its only state is the core storage, which is Sendable.

    /// The storage underneath: `CredentialStorage.shared` for `shared`.
    public let credentialStorage: CredentialStorage

    /// A storage over `credentialStorage` (a new one in memory by default).
    public init(credentialStorage: CredentialStorage = CredentialStorage()) {
        self.credentialStorage = credentialStorage
        super.init()
    }

    private static let sharedStorage = URLCredentialStorage(credentialStorage: .shared)

    /// The storage of `.default` configurations (kept on disk).
    open class var shared: URLCredentialStorage { sharedStorage }

    open func credentials(for space: URLProtectionSpace) -> [String: URLCredential]? {
        let credentials = credentialStorage.credentials(for: space)
        return credentials.isEmpty ? nil : credentials
    }

    open var allCredentials: [URLProtectionSpace: [String: URLCredential]] { credentialStorage.allCredentials }

    open func set(_ credential: URLCredential, for space: URLProtectionSpace) {
        credentialStorage.set(credential, for: space)
    }

    open func remove(_ credential: URLCredential, for space: URLProtectionSpace) {
        credentialStorage.remove(credential, for: space)
    }

    /// The options (Apple's `NSURLCredentialStorageRemoveSynchronizableCredentials`)
    /// concern iCloud Keychain and change nothing here.
    open func remove(_ credential: URLCredential, for space: URLProtectionSpace, options: [String: AnyObject]? = [:]) {
        credentialStorage.remove(credential, for: space)
    }

    open func defaultCredential(for space: URLProtectionSpace) -> URLCredential? {
        credentialStorage.defaultCredential(for: space)
    }

    open func setDefaultCredential(_ credential: URLCredential, for space: URLProtectionSpace) {
        credentialStorage.setDefaultCredential(credential, for: space)
    }

    // MARK: - Per task (the task changes nothing: one storage serves them all)

    open func getCredentials(
        for space: URLProtectionSpace, task: URLSessionTask,
        completionHandler: @escaping @Sendable ([String: URLCredential]?) -> Void
    ) {
        completionHandler(credentials(for: space))
    }

    open func set(_ credential: URLCredential, for space: URLProtectionSpace, task: URLSessionTask) {
        set(credential, for: space)
    }

    open func remove(
        _ credential: URLCredential, for space: URLProtectionSpace, options: [String: AnyObject]? = [:],
        task: URLSessionTask
    ) {
        remove(credential, for: space)
    }

    open func getDefaultCredential(
        for space: URLProtectionSpace, task: URLSessionTask,
        completionHandler: @escaping @Sendable (URLCredential?) -> Void
    ) {
        completionHandler(defaultCredential(for: space))
    }

    open func setDefaultCredential(_ credential: URLCredential, for space: URLProtectionSpace, task: URLSessionTask) {
        setDefaultCredential(credential, for: space)
    }
}
