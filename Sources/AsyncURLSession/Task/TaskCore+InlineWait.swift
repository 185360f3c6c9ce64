internal import CurlEngine

extension TaskCore {
    /// Called by a consumer inside its continuation's closure, once its
    /// waiter is registered and while no body byte has arrived (checked by
    /// the caller under the lock that registered the waiter): the consumer's
    /// thread may wait for the transfer itself instead of parking
    /// (`CurlEngine.waitInline`), until `waiterTaken` says it was resumed.
    ///
    /// Why only before the body: that is the latency-bound part of a request
    /// (the head, and a small body with it, come in one read), where waiting
    /// inline saves two thread switches per request. A streamed body is read
    /// ahead by the engine thread while the consumer works on the last
    /// chunk; read on the consumer's thread instead, its chunks came from a
    /// second malloc arena, and one 256 MiB GET through `task.events`
    /// peaked at 32.3 against 31.2 MiB (medians of 6 alternating runs).
    func waitInlineBeforeBody(on exchange: any HopExchange, until waiterTaken: (borrowing TaskMachine) -> Bool) {
        exchange.waitInline {
            guarded.withLock { waiterTaken($0) || $0.pipeline.bytesReceived > 0 }
        }
    }

    /// `SessionTask.waitInlineForCollection`: for a collecting task no
    /// Swift task waits on (the classic completion handler).
    func waitInlineForCollection() {
        let exchange = guarded.withLock { $0.exchangeBeforeBody }
        guard let exchange else { return }
        waitInlineBeforeBody(on: exchange) { $0.pipeline.end != nil }
    }
}
