/// Lets the thread that starts a transfer run the engine's turn itself while
/// the engine thread sleeps with nothing in flight.
///
/// Why: one request at a time (a latency-bound loop) otherwise costs three
/// thread switches per request: the caller parks, the engine thread wakes to
/// send and parks until the response, then parks again after handing the
/// response over. Run inline, the send happens on the caller's thread and the
/// engine thread wakes only for the response: two switches (`perf stat`,
/// 20,000 GETs of 1 KiB one at a time through `data(for:)`: 40,742 context
/// switches). `InlineWait` then lets the caller read the response too: one.
/// Throughput went from 8,998 to 9,519 requests per second through
/// `data(for:)` (medians of 11 alternating runs; raw libcurl made
/// 13,051 in the same stretch), and the classic completion-handler API
/// gained 17% (9,117 to 10,676, medians of 7).
///
/// Why only when nothing is in flight: an inline turn holds the loop, and an
/// engine thread woken for a socket meanwhile waits for it. A first version
/// that ran inline whenever the thread slept lost a tenth of the throughput
/// at 64 requests in flight. Why one pass, leaving commands that arrive
/// during it to the engine thread: at 16 in flight a thread's transfers
/// sometimes all end in one turn, and the consumers it wakes start their
/// next requests in a burst; a turn that served the whole burst on the first
/// caller's thread cost 4% to 14% of the throughput in three of four sets of
/// 7 to 11 alternating runs.
/// Only starts are run inline, and never from an engine thread.
///
/// What the caller's thread does meanwhile is engine work: libcurl's send
/// on a pooled connection, or for a new connection the steps libcurl takes
/// without waiting (the non-blocking connect; on loopback, where it completes
/// at once, possibly a TLS handshake's first flight), and the held wake-ups
/// of the turn. Delegates run as they would on the engine
/// thread (`EngineTurn.standingIn`); Swift jobs of the engine's executor are
/// left for the engine thread.
protocol InlineTurn: Sendable {
    /// Runs one turn on the calling thread; false when the engine thread
    /// must be woken instead (it is running a turn itself, or this turn
    /// left it work).
    func run() -> Bool

    /// Waits for transfer `id` on the calling thread, for at most `limit`
    /// ns (see `InlineWait`).
    func wait(for id: TransferID, limit: UInt64, until isDone: () -> Bool) -> InlineWait.End
}

/// The inline turn of one engine thread's loop.
final class LoopInlineTurn: InlineTurn, @unchecked Sendable {
    // @unchecked: `EngineLoop` is not Sendable. `run()` and `wait` touch it
    // only inside `EngineLoop.runInlineTurn` and `runInlineWait`, under the
    // loop's ownership lock, which its own thread holds for each of its
    // turns; the loop lives as long as the process.
    private let loop: EngineLoop

    init(loop: EngineLoop) {
        self.loop = loop
    }

    func run() -> Bool {
        loop.runInlineTurn()
    }

    func wait(for id: TransferID, limit: UInt64, until isDone: () -> Bool) -> InlineWait.End {
        loop.runInlineWait(for: id, limit: limit, until: isDone)
    }
}
