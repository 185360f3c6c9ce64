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
        return guarded.withLock { guarded in
            guard guarded.transferID == id, guarded.pipeline.consumer == .events, kind == .data,
                guarded.download == nil
            else { return false }
            guarded.splitBody(into: MultipartState(parser: parser, outer: response))
            return true
        }
    }

    func multipartReceived(_ bytes: UnsafeRawBufferPointer, in guarded: inout TaskMachine) -> (BodyVerdict, Wake?) {
        guard guarded.multipart != nil else { return (.abort(URLError(.cancelled)), nil) }
        if guarded.pipeline.mustPauseBody() { return (.pause, nil) }
        var wake: Wake?
        for part in guarded.multipart?.feed(bytes) ?? [] {
            let delivery: TaskPipeline.DeliveryAction
            switch part {
            case .response(let response):
                let decision = ResponseDecision(listener: .part(WeakTaskCore(core: self)))
                delivery = guarded.pipeline.receivedResponse(response, decision: decision)
            case .body(let data):
                delivery = guarded.pipeline.receivedPartBody(data)
            }
            if wake == nil { wake = guarded.wake(for: delivery) }
        }
        return (.accepted, wake)
    }
}
