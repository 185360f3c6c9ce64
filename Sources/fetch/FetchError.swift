import AsyncURLSession
import Foundation

/// One line for the user: what went wrong and, where we know, what to do.
struct FetchError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }

    init(describing error: any Error) {
        if let urlError = error as? URLError {
            let hint: String
            switch urlError.code {
            case .cannotConnectToHost: hint = " (is a server listening there?)"
            case .cannotFindHost: hint = " (check the host name)"
            case .timedOut: hint = " (try --timeout with a larger value)"
            case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot:
                hint = " (pass the server's CA with --cacert)"
            case .unsupportedURL: hint = " (use an http:// or https:// URL)"
            default: hint = ""
            }
            description = "\(urlError.localizedDescription) [URLError \(urlError.code.rawValue)]\(hint)"
        } else {
            description = "\(error)"
        }
    }
}
