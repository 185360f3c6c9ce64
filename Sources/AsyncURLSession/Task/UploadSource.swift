import Foundation

/// Where an upload task's body comes from (data tasks use the request's own
/// `httpBody` or `httpBodyStream`).
enum UploadSource: Sendable {
    case none
    case data(Data)
    case file(URL)
    /// Asked for with a `needBodyStream` decision, at start and on every re-send.
    case streamed
}
