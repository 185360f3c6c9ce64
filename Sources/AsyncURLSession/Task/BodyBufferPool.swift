import Foundation
import Synchronization

/// Page-aligned buffers for large collected bodies, reused across requests.
///
/// Why: a fresh 1 MiB buffer per response costs the kernel 256 page
/// allocations, zeroings and memcg charges, and as many frees when `free`
/// hands it back (W3: a third of the client's CPU). The `Data` that
/// `data(for:)` returns gives its buffer back here when the caller drops it,
/// so a steady stream of large responses reuses a few resident buffers.
///
/// How much is kept: a buffer comes back when its caller drops the body, and
/// the next response takes one only when its first bytes arrive, a round trip
/// later, so at 64 responses of 1 MiB in flight up to 64 MiB sit idle between
/// the two. A fixed 16 MiB cap freed most of them and faulted them in again
/// (W3: 576 against 492 µs of CPU per request with no cap). So the pool keeps
/// as many idle bytes as were in use at the peak of the last `idleLifetime`
/// (at least `minimumIdleLimit`): never more than the workload itself held a
/// moment ago. And only while responses keep coming: a buffer idle for
/// `idleLifetime` is freed at the next take or give.
///
/// One pool, `shared`, serves the process; tests make their own, so that
/// what they check about idle buffers does not depend on the bodies other
/// tests collect meanwhile (a test that expected its buffer to be kept
/// failed in 2 of 15 full test runs, when parallel tests had filled the
/// shared pool).
final class BodyBufferPool: Sendable {
    static let shared = BodyBufferPool()

    /// Nanoseconds an idle buffer is kept (see the type's comment).
    let idleLifetime: UInt64

    init(idleLifetime: UInt64 = BodyBufferPool.defaultIdleLifetime) {
        self.idleLifetime = idleLifetime
    }

    /// A pool that goes away (a test's) frees what it kept. Buffers still
    /// taken keep the pool alive: a handed-over `Data` holds it.
    deinit {
        release(idle.withLock { $0.buffers })
    }

    static let minimumIdleLimit = 16 << 20
    /// Nanoseconds an idle buffer of `shared` is kept.
    static let defaultIdleLifetime: UInt64 = 2_000_000_000
    private static let granule = 64 << 10

    private struct IdleBuffer {
        let address: UInt
        let capacity: Int
        /// Monotonic nanoseconds when it came back.
        let since: UInt64
    }

    private struct Idle {
        /// Oldest first; takes pick the newest of a capacity (warmest pages).
        var buffers: [IdleBuffer] = []
        var bytes = 0
        /// Bytes of buffers taken and not given back.
        var inUse = 0
        /// The most `inUse` reached since `peakSince`; a new window starts
        /// every `idleLifetime`.
        var peakInUse = 0
        var peakSince: UInt64 = 0

        /// Removes buffers idle since before `cutoff`, returning them.
        mutating func expire(before cutoff: UInt64) -> [IdleBuffer] {
            guard let oldest = buffers.first, oldest.since < cutoff else { return [] }
            let count = buffers.firstIndex { $0.since >= cutoff } ?? buffers.count
            let expired = Array(buffers.prefix(count))
            buffers.removeFirst(count)
            bytes -= expired.reduce(0) { $0 + $1.capacity }
            return expired
        }
    }

    private let idle = Mutex(Idle())

    /// The capacity a request for `count` bytes gets.
    static func capacity(for count: Int) -> Int {
        (count + granule - 1) / granule * granule
    }

    /// A buffer of `capacity(for:)` bytes, or nil when memory is short. The
    /// pages of its first `populating` bytes are resident (all of them when
    /// it was used before).
    func take(capacity: Int, populating: Int = BodyBufferPool.populateWindow) -> UnsafeMutableRawPointer? {
        let now = DispatchTime.now().uptimeNanoseconds
        let (reused, expired) = idle.withLock { idle -> (UInt?, [IdleBuffer]) in
            let expired = idle.expire(before: now &- idleLifetime)
            idle.inUse += capacity
            if now &- idle.peakSince > idleLifetime {
                idle.peakInUse = idle.inUse
                idle.peakSince = now
            } else {
                idle.peakInUse = max(idle.peakInUse, idle.inUse)
            }
            guard let index = idle.buffers.lastIndex(where: { $0.capacity == capacity }) else { return (nil, expired) }
            let buffer = idle.buffers.remove(at: index)
            idle.bytes -= capacity
            return (buffer.address, expired)
        }
        release(expired)
        if let reused { return UnsafeMutableRawPointer(bitPattern: reused) }
        var memory: UnsafeMutableRawPointer?
        // 4 KiB pages, not 2 MiB ones (MADV_HUGEPAGE): huge pages took a
        // 256 MiB body 1,525 page faults instead of 66,933, but each must be
        // a free 2 MiB block, and where the hypervisor takes such blocks back
        // while they are free (virtio-balloon free page reporting, as on
        // these machines) the first touch of each costs the host a fault and
        // a zeroing. One 256 MiB GET through `data(for:)`, 4 s apart (as a
        // service fetching now and then, or the benchmark's rotation):
        // 0.64 to 0.88 s with huge pages, 0.30 to 0.39 s in 4 KiB pages
        // faulted one at a time, 0.21 to 0.32 s with `populate` windows.
        guard posix_memalign(&memory, Self.pageSize, capacity) == 0, let memory else { return nil }
        Self.populate(memory, bytes: min(capacity, populating))
        return memory
    }

    /// Memory page size for alignment and `populate`.
    static let pageSize = 4096

    /// How far ahead of the bytes received a buffer's pages are faulted in
    /// (see `populate`); the whole buffer when it is no larger. Not all of a
    /// large buffer at once: a huge announced length (up to
    /// `maximumCollectedBodySize`, 1 GiB by default) must not commit that
    /// much memory before a byte arrives.
    static let populateWindow = 16 << 20

    /// Faults in `bytes` bytes from `start` (page aligned) with one call
    /// instead of one trap per 4 KiB page (MADV_POPULATE_WRITE, Linux 5.14+;
    /// elsewhere it fails with EINVAL and the pages fault lazily).
    static func populate(_ start: UnsafeMutableRawPointer, bytes: Int) {
        guard bytes > 0 else { return }
        let madvPopulateWrite: Int32 = 23
        _ = madvise(start, bytes, madvPopulateWrite)
    }

    /// Takes a buffer back (or frees it when the pool is full).
    func give(_ buffer: UnsafeMutableRawPointer, capacity: Int) {
        let now = DispatchTime.now().uptimeNanoseconds
        let (kept, expired) = idle.withLock { idle -> (Bool, [IdleBuffer]) in
            let expired = idle.expire(before: now &- idleLifetime)
            let limit = max(Self.minimumIdleLimit, idle.peakInUse)
            idle.inUse -= capacity
            guard idle.bytes + capacity <= limit else { return (false, expired) }
            idle.buffers.append(IdleBuffer(address: UInt(bitPattern: buffer), capacity: capacity, since: now))
            idle.bytes += capacity
            return (true, expired)
        }
        release(expired)
        if !kept { free(buffer) }
    }

    /// Frees outside the lock: returning 1 MiB to the kernel takes a while.
    private func release(_ buffers: [IdleBuffer]) {
        for buffer in buffers { free(UnsafeMutableRawPointer(bitPattern: buffer.address)) }
    }

    /// Idle bytes now (tests).
    var idleBytes: Int { idle.withLock { $0.bytes } }

    /// Bytes taken and not given back (tests).
    var bytesInUse: Int { idle.withLock { $0.inUse } }

    /// Whether `buffer` waits in the pool (tests).
    func holds(_ buffer: UnsafeMutableRawPointer) -> Bool {
        idle.withLock { $0.buffers.contains { $0.address == UInt(bitPattern: buffer) } }
    }
}
