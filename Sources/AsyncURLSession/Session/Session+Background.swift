internal import AgentWire
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    /// A background session's own events: each task an earlier program
    /// with this identifier left (`reconnected`, running already), then
    /// `allEventsDelivered` once those that had ended were handed over.
    /// Throws when the session cannot use the transfer agent (its
    /// identifier is held by another program:
    /// `.backgroundSessionInUseByAnotherProcess`; the agent cannot be
    /// reached). Ends at once for any other session. One consumer.
    public nonisolated var backgroundEvents: AsyncThrowingStream<BackgroundSessionEvent, any Error> {
        context.background?.events ?? AsyncThrowingStream { $0.finish() }
    }

    /// The tasks an earlier program with this identifier left, made (and
    /// resumed) as this session was: the `reconnected` ones of
    /// `backgroundEvents`, for code that must know them at once (the
    /// classic API registers them before its first new task). Empty for
    /// any other session.
    public nonisolated var reconnectedTasks: [SessionTask] {
        context.background?.reconnectedTasks ?? []
    }

    /// The identifiers of `reconnectedTasks` whose transfer had ended
    /// before this session was made (their ends are what
    /// `allEventsDelivered` is about).
    package nonisolated var tasksEndedWhileAway: Set<Int> {
        context.background?.endedWhileAway ?? []
    }

    /// Makes a task for each transfer an earlier program left, under its
    /// old identifier, and runs it.
    nonisolated func reconnectBackgroundTasks() {
        guard let link = context.background else { return }
        var made: [SessionTask] = []
        for status in link.left {
            guard let recorded = status.request, let url = URL(string: recorded.url) else { continue }
            var request = URLRequest(url: url)
            request.httpMethod = recorded.method
            for pair in recorded.headers where pair.count == 2 { request.addValue(pair[1], forHTTPHeaderField: pair[0]) }
            let upload: UploadSource = recorded.bodyFile.map { .file(URL(fileURLWithPath: $0)) } ?? .none
            let kind: TaskKind = recorded.bodyFile == nil ? .download : .upload
            guard let core = context.register(identifier: status.task, {
                TaskCore(
                    identifier: $0, context: context, request: request, delegate: nil, kind: kind, upload: upload,
                    resumeFrom: nil, refusal: nil)
            }) else { continue }
            let task = SessionTask(core: core)
            link.hold(task)
            link.reconnected(task, to: status)
            made.append(task)
        }
        link.reconnectedAll()
        for task in made { task.resume() }
    }
}
