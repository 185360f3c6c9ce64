import AsyncURLSession

/// How much of a streaming task's body the adapter may hold, and where.
///
/// A delegate task's body bytes wait in two places: the core task's stream
/// (up to `streamBufferHighWatermark`) and the delegate queue, where chunks
/// are posted ahead of a delegate that is still busy (`DelegateQueue`). Each
/// with the whole budget, a slow delegate made the adapter hold twice what
/// the configuration allows: 2 MiB by default, and a peak RSS about 1 MiB
/// above the event stream's when a 1 GiB body was read at 150 MiB/s (W6).
/// So the configured budget is split: half for the core's stream, half for
/// posted chunks.
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
