import Foundation
import Synchronization

/// Page-aligned buffers for large collected bodies, reused across requests.
///
/// Why: a fresh 1 MiB buffer per response costs the kernel 256 page
/// allocations, zeroings and memcg charges, and as many frees when `free`
/// hands it back (W3: a third of the client's CPU). The `Data` that
/// `data(for:)` returns gives its buffer back here when the caller drops it,
/// so a steady stream of large responses reuses a few resident buffers.
/// Idle buffers are capped (`idleLimit` bytes); beyond that they are freed.
enum BodyBufferPool {
    /// Idle bytes kept at most: enough to cover a burst of responses of a few
    /// MiB finishing together, small next to the bodies themselves.
    static let idleLimit = 16 << 20
    private static let granule = 64 << 10

    private struct Idle {
        /// Base addresses by capacity (a multiple of `granule`).
        var buffers: [Int: [UInt]] = [:]
        var bytes = 0
    }

    private static let idle = Mutex(Idle())

    /// The capacity a request for `count` bytes gets.
    static func capacity(for count: Int) -> Int {
        (count + granule - 1) / granule * granule
    }

    /// A buffer of `capacity(for:)` bytes whose pages are resident, or nil
    /// when memory is short.
    static func take(capacity: Int) -> UnsafeMutableRawPointer? {
        let reused = idle.withLock { idle -> UInt? in
            guard let address = idle.buffers[capacity]?.popLast() else { return nil }
            idle.bytes -= capacity
            return address
        }
        if let reused { return UnsafeMutableRawPointer(bitPattern: reused) }
        var memory: UnsafeMutableRawPointer?
        guard posix_memalign(&memory, 4096, capacity) == 0, let memory else { return nil }
        // Faults every page in one call instead of one trap per 4 KiB
        // (Linux 5.14+; elsewhere it fails with EINVAL and pages fault lazily).
        // Only up to `idleLimit`: a huge announced length (up to
        // maximumCollectedBodySize, 1 GiB by default) must not commit that
        // much memory before a byte arrives.
        if capacity <= idleLimit {
            let madvPopulateWrite: Int32 = 23
            _ = madvise(memory, capacity, madvPopulateWrite)
        }
        return memory
    }

    /// Takes a buffer back (or frees it when the pool is full).
    static func give(_ buffer: UnsafeMutableRawPointer, capacity: Int) {
        let kept = idle.withLock { idle -> Bool in
            guard idle.bytes + capacity <= idleLimit else { return false }
            idle.buffers[capacity, default: []].append(UInt(bitPattern: buffer))
            idle.bytes += capacity
            return true
        }
        if !kept { free(buffer) }
    }

    /// Idle bytes now (tests).
    static var idleBytes: Int { idle.withLock { $0.bytes } }
}
