internal import CCurl

/// The monotonic time at the start of the engine loop's current turn.
///
/// Why: libcurl calls our header callback once per header line; reading the
/// clock in every callback (for the idle timeout) cost about 2% of a small
/// request. The idle sweep runs at 4 Hz, so the time a turn started is
/// precise enough for "last activity".
enum EngineClock {
    /// Safe without a lock: written and read only on the engine thread.
    nonisolated(unsafe) static var turnStart: UInt64 = ccurl_monotonic_nanoseconds()
}
