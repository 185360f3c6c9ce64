import Foundation

/// A request as the agent sends it: everything needed to send it again
/// after a crash, nothing that lives only in the program that made it.
package struct BackgroundRequest: Sendable, Codable, Equatable {
    package var method: String
    package var url: String
    /// In order, repeats kept.
    package var headers: [[String]]
    /// Uploads only: the file whose bytes are the body (read as sent).
    package var bodyFile: String?
    /// `isDiscretionary`: runs only while no other transfer of the user's
    /// does (nil in journals written before it existed: false).
    package var discretionary: Bool?

    package init(method: String, url: String, headers: [[String]] = [], bodyFile: String? = nil, discretionary: Bool? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.bodyFile = bodyFile
        self.discretionary = discretionary
    }

    package var isDiscretionary: Bool { discretionary ?? false }
}
