import Foundation

/// The head of the response a background transfer's body came with (its
/// status and header fields, in order), kept by the agent so that a program
/// reconnecting later sees the response as it came.
package struct ResponseHeadRecord: Sendable, Codable, Equatable {
    package var statusCode: Int
    /// Name and value pairs, repeats kept.
    package var headers: [[String]]
    /// The URL the response came from (after redirects, which the agent follows).
    package var url: String

    package init(statusCode: Int, headers: [[String]], url: String) {
        self.statusCode = statusCode
        self.headers = headers
        self.url = url
    }
}
