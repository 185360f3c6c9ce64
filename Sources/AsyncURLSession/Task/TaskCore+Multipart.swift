internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// multipart/x-mixed-replace (server push of successive versions, e.g. camera
/// frames): each part is a response of its own, followed by its bytes, as
/// URLSession calls didReceiveResponse once per part. Only for events
/// consumers of data tasks; data(for:) and downloads get the raw body.
extension TaskCore {
    /// Starts splitting parts if the response calls for it. Returns whether it did.
    func startMultipart(_ source: ResponseSource, id: HopID) -> Bool {
        // The cheap test first, made while the head was parsed: parsing every
        // response's Content-Type cost about 4% of a small request, and
        // even reading it as a String about 1%.
        guard source.contentTypeIsMultipart,
            let contentType = source.value(forHTTPHeaderField: "Content-Type"),
            let parser = MultipartReplaceParser(contentType: contentType),
            let response = source.response
        else { return false }
        let parts = MultipartState(parser: parser, outer: response)
        return guarded.withLock { $0.startMultipart(parts, id: id, isDataTask: kind == .data) }
    }
}
