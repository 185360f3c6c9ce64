import Foundation

/// Whether a session's requests try HTTP/3 (`assumesHTTP3Capable`), from
/// what the configuration asks and what the linked libcurl has. A value,
/// so both ways are tested on a machine whose libcurl has no HTTP/3
/// (Debian 12's).
struct HTTP3Choice: Equatable {
    /// Requests ask libcurl for HTTP/3 first.
    let prefersHTTP3: Bool
    /// Said once in the session's log: why HTTP/3 was asked for and not used.
    let notice: String?

    init(asked: Bool, libraryHasHTTP3: Bool, libcurlVersion: String) {
        prefersHTTP3 = asked && libraryHasHTTP3
        notice = asked && !libraryHasHTTP3
            ? "assumesHTTP3Capable is set, but the linked libcurl \(libcurlVersion) has no HTTP/3 "
                + "(curl_version_info lists no HTTP3 feature): requests use HTTP/2 or HTTP/1.1. "
                + "Link a libcurl built with HTTP/3 (ngtcp2 or quiche) to use it."
            : nil
    }

    /// The Alt-Svc cache's file for a session that tries HTTP/3 and keeps
    /// stores on disk: beside the cookies, in the user's data folder; nil
    /// for an ephemeral session (its stores die with it) or without HTTP/3.
    func altSvcFile(kind: SessionConfiguration.Kind) -> String? {
        guard prefersHTTP3, kind == .default, let folder = StorageLocation.defaultFolder,
            StorageLocation.prepare(folder) == nil
        else { return nil }
        return folder.appendingPathComponent("alt-svc.txt").path
    }
}
