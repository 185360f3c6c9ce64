/// The header-field buffers an easy handle keeps from one transfer to the
/// next: the parser's working buffers, emptied with their capacity kept, and
/// the fields of the last head it handed out.
///
/// Why: a head's fields were parsed into two new buffers per response, on
/// the engine thread, and freed by whichever consumer thread dropped the
/// response last. glibc then takes the engine arena's lock for each free,
/// against the engine's own allocations (futex waits on both sides under
/// load). Now the parser reuses its buffers, and a head byte for byte like
/// the handle's last one (the same resource fetched again within the second
/// its Date names) is handed out in that head's buffers: nothing is
/// allocated or freed for it. A different head is handed out in the
/// parser's buffers themselves, and the next head is parsed into new ones
/// (a copy instead cost the same two allocations, and a transfer that is its
/// handle's only one held both: 10,000 slow transfers at once took 0.4 KiB
/// more each).
///
/// 20,000 GETs of 1 KiB at concurrency 64 (uprobes): allocations per request
/// 39.0 -> 37.0 through `data(for:)` and 50.9 -> 48.9 through `task.events`,
/// waits for a malloc arena lock 0.061 -> 0.050 and 0.122 -> 0.107; CPU per
/// request moved within the noise (40.6 -> 40.0 and 47.5 -> 47.0 µs, medians
/// of 15 alternating runs).
struct HeadBuffers {
    /// Where the parser collects a head's fields. After a head that was
    /// handed out in it, a new one (see `fieldsToHandOut`).
    var scratch = ResponseHeaderFields()
    /// The fields of the last head handed out, shared with that head.
    private var last: ResponseHeaderFields?

    /// Larger heads are not kept: a pooled handle should not pin much memory.
    static let keptFieldLimit = 32
    static let keptByteLimit = 4096

    /// The fields to hand out for the head `scratch` holds now.
    mutating func fieldsToHandOut() -> ResponseHeaderFields {
        if let last, last == scratch { return last }
        let fields = scratch
        // Left without buffers: the next head's `reserveTypicalCapacity`
        // allocates new ones.
        scratch = ResponseHeaderFields()
        last = fields.count <= Self.keptFieldLimit && fields.byteCount <= Self.keptByteLimit ? fields : nil
        return fields
    }
}
