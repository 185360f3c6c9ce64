import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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

    init(protocolClasses: [AnyClass]?, fallback: (any LocalTransport)?) {
        classes = (protocolClasses ?? []).compactMap { $0 as? URLProtocol.Type }
        self.fallback = fallback
    }

    var isActive: Bool {
        !classes.isEmpty || URLProtocol.hasRegistered.load(ordering: .acquiring) || (fallback?.isActive ?? false)
    }

    func responder(for request: LocalRequest) -> (any LocalResponder)? {
        var candidates = classes
        if URLProtocol.hasRegistered.load(ordering: .acquiring) { candidates += URLProtocol.registeredClasses }
        if let type = candidates.first(where: { $0.canInit(with: request.request) }) {
            return URLProtocolResponder(type: type)
        }
        guard let fallback, fallback.isActive else { return nil }
        return fallback.responder(for: request)
    }
}
