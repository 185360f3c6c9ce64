/// The final response on its way out while the task's or session's handlers
/// decide on it (`SessionTaskDelegate.task(_:didReceive:decision:)`).
///
/// Why a state of its own: the engine may end the hop while the handlers
/// still decide (a small body arrives whole at once). The end must then
/// wait until the response is published, or the consumer would see the task
/// finish before its response. A held 3xx/401/407 that becomes the result
/// has ended its hop already, and ends right after publishing too.
///
/// A value type with explicit transitions, driven by `TaskCore` under the
/// task's lock; each input returns what the driver does next.
struct ResponsePublication {
    private enum State {
        /// No response is waiting for handlers.
        case idle
        /// Handlers decide; the hop's end, if it came meanwhile.
        case deciding(pendingEnd: HopEnd?)
        /// Published without handlers, but the hop had ended already (a
        /// held response that became the result).
        case endsWhenPublished(HopEnd)
    }

    private var state = State.idle

    /// Whether handlers are deciding on the response now.
    var handlersDeciding: Bool {
        if case .deciding = state { return true }
        return false
    }

    /// Handlers start deciding (the driver closes the pipeline's body gate).
    mutating func handlersStarted() {
        switch state {
        case .idle: state = .deciding(pendingEnd: nil)
        case .endsWhenPublished(let end): state = .deciding(pendingEnd: end)
        case .deciding: break
        }
    }

    /// What the driver does with a hop that ended.
    enum HopEndAction: Equatable {
        /// Finish it now.
        case finishNow
        /// Kept: `published()` returns it once the response is out.
        case heldUntilPublished
    }

    mutating func hopEnded(_ end: HopEnd) -> HopEndAction {
        switch state {
        case .deciding:
            state = .deciding(pendingEnd: end)
            return .heldUntilPublished
        case .idle, .endsWhenPublished:
            return .finishNow
        }
    }

    /// A held response becomes the result: its hop is over, so the task
    /// ends right after the response is published.
    mutating func endAfterPublishing() {
        switch state {
        case .deciding: state = .deciding(pendingEnd: .success)
        case .idle, .endsWhenPublished: state = .endsWhenPublished(.success)
        }
    }

    /// The response was published (after the handlers, if they decided).
    /// Returns the hop end to finish now, if one waited for this.
    mutating func published() -> HopEnd? {
        defer { state = .idle }
        switch state {
        case .idle: return nil
        case .deciding(let end): return end
        case .endsWhenPublished(let end): return end
        }
    }
}
