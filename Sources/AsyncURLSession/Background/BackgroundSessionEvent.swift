import Foundation

/// What a background session says about itself, beside its tasks' own
/// events (`Session.backgroundEvents`).
public enum BackgroundSessionEvent: Sendable {
    /// A task that an earlier program with this identifier started, still
    /// running in the agent or ended while no program held the session. It
    /// keeps its `taskIdentifier` and runs already: its events (progress,
    /// `downloaded` with the file, completion) come on its `events` as a
    /// new task's do.
    case reconnected(SessionTask)
    /// The ends of every task that finished while no program held the
    /// session have been handed over (`urlSessionDidFinishEvents(forBackgroundURLSession:)`
    /// in the classic API). The last event.
    case allEventsDelivered
}
