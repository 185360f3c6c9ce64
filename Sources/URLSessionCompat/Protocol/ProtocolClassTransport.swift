import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The classic API's `URLProtocol` classes as the core's `LocalTransport`:
/// the configuration's `protocolClasses` first, in order, then the
/// registered ones, the last registered first; the first whose
/// `canInit(with:)` accepts a hop's request answers it. Other requests go
/// to `fallback` (a transport the core configuration already had), then to
/// the network. Installed on every session of the adapter; while no class
/// is listed or registered it costs one atomic load per hop.
struct ProtocolClassTransport: LocalTransport {
    let classes: [URLProtocol.Type]
    let fallback: (any LocalTransport)?
    let tasks: ClassicTaskLookup

    init(protocolClasses: [AnyClass]?, fallback: (any LocalTransport)?, tasks: ClassicTaskLookup) {
        classes = (protocolClasses ?? []).compactMap { $0 as? URLProtocol.Type }
        self.fallback = fallback
        self.tasks = tasks
    }

    var isActive: Bool {
        !classes.isEmpty || URLProtocol.hasRegistered.load(ordering: .acquiring) || (fallback?.isActive ?? false)
    }

    func responder(for request: LocalRequest) -> (any LocalResponder)? {
        var candidates = classes
        if URLProtocol.hasRegistered.load(ordering: .acquiring) { candidates += URLProtocol.registeredClasses }
        if let type = candidates.first(where: { $0.canInit(with: request.request) }) {
            return URLProtocolResponder(type: type, task: tasks.task(withCoreIdentifier: request.taskIdentifier))
        }
        guard let fallback, fallback.isActive else { return nil }
        return fallback.responder(for: request)
    }
}

/// Finds the classic task a hop belongs to, for a URLProtocol's `task`.
/// Made before its session (the core configuration holds it), attached to
/// the session after; held weakly, since the session holds the core.
final class ClassicTaskLookup: Sendable {
    private let session = Mutex<WeakSession>(WeakSession())

    private struct WeakSession: @unchecked Sendable {
        // @unchecked: a weak reference to a Sendable session, only read and
        // written under the mutex.
        weak var value: URLSession?
    }

    func attach(_ session: URLSession) {
        self.session.withLock { $0.value = session }
    }

    func task(withCoreIdentifier identifier: Int) -> URLSessionTask? {
        session.withLock { $0.value }?.task(withCoreIdentifier: identifier)
    }
}
