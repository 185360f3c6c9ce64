import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSession {
    /// A background session's tasks that an earlier program left become
    /// this session's tasks, under their old identifiers, before any new
    /// task is made; their delegate calls are a new task's
    /// (`didWriteData`, `didFinishDownloadingTo`, `didCompleteWithError`).
    /// Once the ends of those that had finished meanwhile were delivered,
    /// the delegate hears `urlSessionDidFinishEvents(forBackgroundURLSession:)`
    /// (only when there was such a task: as Apple's, it is about events
    /// that waited for the program).
    func takeUpBackgroundTasks() {
        guard asyncSession.configuration.backgroundIdentifier != nil else { return }
        var taken: [URLSessionTask] = []
        for core in asyncSession.reconnectedTasks {
            let task: URLSessionTask
            if core.kind == .upload {
                task = register(keepingIdentifierOf: core, as: URLSessionUploadTask.init(core:identifier:session:))
            } else {
                task = register(keepingIdentifierOf: core, as: URLSessionDownloadTask.init(core:identifier:session:))
            }
            taken.append(task)
        }
        for task in taken { task.resume() }
        let ended = asyncSession.tasksEndedWhileAway
        guard !ended.isEmpty else { return }
        let events = asyncSession.backgroundEvents
        Task { [self] in
            do {
                for try await event in events {
                    guard case .allEventsDelivered = event else { continue }
                    // The ends the core handed over are delivered in each
                    // task's lane: wait for those before saying so.
                    for identifier in ended.sorted() { await waitForDelivery(of: identifier) }
                    let delegate = self.delegate
                    await makeDelegateLane().run { [self] in
                        delegate?.urlSessionDidFinishEvents(forBackgroundURLSession: self)
                    }
                }
            } catch {
                // Refused or unreachable: every task fails with the reason.
            }
        }
    }
}
