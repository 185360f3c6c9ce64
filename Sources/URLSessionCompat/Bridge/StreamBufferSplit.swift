import AsyncURLSession

/// How much of a streaming task's body the adapter may hold, and where.
///
/// A delegate task's body bytes could wait in two places: the core task's
/// stream (up to `streamBufferHighWatermark`) and the delegate queue, where
/// chunks are posted ahead of a delegate that is still busy (`DelegateQueue`).
/// Each with the whole budget, a slow delegate made the adapter hold twice
/// what the configuration allows. So the budget was split: half for the
/// core's stream, half for posted chunks.
///
/// Since the driver runs on its lane of the delegate queue, its calls run in
/// place and nothing is posted ahead (the posted half is only a bound for
/// code off the lane), so a slow delegate holds about half the budget. The
/// core's stream still gets only half: the adapter's process carries about
/// half a MiB more than one using only the core, and with the whole budget
/// a 1 GiB body read at 150 MiB/s peaked at 32.3 MiB (the benchmark's target
/// is 32) against 31.3 with half (medians of 3). A 256 MiB body through
/// `didReceiveData` was faster with the whole budget (1,961 against 1,643
/// MB/s, medians of 7), as the stream pauses less often.
enum StreamBufferSplit {
    /// The core configuration, with its stream holding its half of the budget.
    static func coreConfiguration(_ configuration: SessionConfiguration) -> SessionConfiguration {
        var core = configuration
        core.streamBufferHighWatermark = coreShare(of: configuration.streamBufferHighWatermark)
        // A paused stream resumes below the low watermark: keep it well under
        // the halved high one, or a stream would pause and resume at once.
        core.streamBufferLowWatermark = min(configuration.streamBufferLowWatermark, core.streamBufferHighWatermark / 2)
        return core
    }

    /// The bytes a task's delegate lane may have posted and not yet run.
    static func postedByteLimit(_ configuration: SessionConfiguration) -> Int {
        max(1, configuration.streamBufferHighWatermark - coreShare(of: configuration.streamBufferHighWatermark))
    }

    private static func coreShare(of budget: Int) -> Int {
        max(1, budget / 2)
    }
}
