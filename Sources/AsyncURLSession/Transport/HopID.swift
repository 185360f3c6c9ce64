internal import CurlEngine
import Synchronization

/// Names one hop's exchange in the calls it makes to its task, so that a late
/// call of a hop the task has left is told from the current one: the
/// engine's id for a transfer on the wire, or a serial of the core's own for
/// a hop answered without the network (`LocalTransfer`). The engine never
/// sees the second kind: local hops are not its business.
enum HopID: Hashable, Sendable {
    case engine(TransferID)
    case local(UInt64)

    /// A new id for a hop answered without the network.
    static func local() -> HopID {
        .local(nextLocalSerial.wrappingAdd(1, ordering: .relaxed).oldValue)
    }

    private static let nextLocalSerial = Atomic<UInt64>(1)
}
