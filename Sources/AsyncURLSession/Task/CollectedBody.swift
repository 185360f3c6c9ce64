internal import CStreamingCopy
import Foundation

/// The body `data(for:)` collects, appended 16 KiB at a time on the engine
/// thread.
///
/// Why not a plain `Data`: a body whose length is known and large gets one
/// resident buffer of that size up front from `BodyBufferPool` instead of a
/// fresh allocation that faults in page by page as the copies reach it (W3,
/// 1 MiB bodies: 200 page faults per request, a third of the client's CPU).
/// The buffer then becomes the result without a copy. Small or
/// unknown-length bodies use `Data` as before.
struct CollectedBody {
    private var data = Data()
    private var buffer: CollectBuffer?
    /// See `BodyBufferPool.populateWindow`; a page multiple (tests use smaller ones).
    private let populateWindow: Int
    /// nil: `BodyBufferPool.shared`. Not stored as a reference: every task's
    /// pipeline holds a CollectedBody, and retaining one shared object from
    /// every thread would make its reference count a contended cache line.
    private let pool: BodyBufferPool?

    /// `pool`: tests give their own.
    init(populateWindow: Int = BodyBufferPool.populateWindow, pool: BodyBufferPool? = nil) {
        self.populateWindow = populateWindow
        self.pool = pool
    }

    /// Bodies at least this large get a prefaulted buffer.
    static let prefaultThreshold = 128 * 1024

    /// Buffers at least this large are filled with streaming stores
    /// (`streaming_copy`): a body this size outgrows a core's cache long
    /// before anyone reads it, so pulling its lines in to write them only
    /// doubles the memory traffic. W2 (one 256 MiB body): 235 against 210 ms
    /// wall, 250 against 227 ms of CPU (medians of 11 alternating runs).
    /// Not for 1 MiB bodies: W3 (64 of them at once) used 6% less CPU with
    /// streaming stores but took 4% longer, and the server on the same
    /// machine 10% more CPU: the stores compete with it for memory bandwidth.
    static let streamingThreshold = 4 << 20

    var count: Int { buffer?.count ?? data.count }
    var isEmpty: Bool { count == 0 }

    /// Before the first byte: room for `capacity` bytes.
    mutating func reserve(_ capacity: Int) {
        guard isEmpty else { return }
        if capacity >= Self.prefaultThreshold,
            let made = CollectBuffer(capacity: capacity, populateWindow: populateWindow, pool: pool)
        {
            buffer = made
        } else {
            data.reserveCapacity(capacity)
        }
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if let buffer {
            if buffer.append(bytes) { return }
            // More than announced: carry on in a Data (rare, a lying server).
            data = buffer.copy()
            self.buffer = nil
        }
        data.append(contentsOf: bytes)
    }

    mutating func append(_ body: Data) {
        body.withUnsafeBytes { append($0) }
    }

    /// The bytes as `Data`, leaving this empty. A prefaulted buffer is handed
    /// over, not copied.
    mutating func take() -> Data {
        defer {
            data = Data()
            buffer = nil
        }
        return buffer?.handOver() ?? data
    }

    /// A copy of the bytes (tests, diagnostics).
    var bytes: Data { buffer?.copy() ?? data }

    /// Whether every page of `range` (byte offsets) of the pooled buffer is
    /// resident; nil without one (tests).
    func isResident(_ range: Range<Int>) -> Bool? {
        buffer?.isResident(range)
    }
}

/// One buffer from `BodyBufferPool`. A class so that copies of
/// `TaskPipeline` share it and exactly one owner returns it.
///
/// `@unchecked Sendable`: it lives in a task's `TaskPipeline`, inside
/// `TaskCore.guarded`, and is only read or mutated under that Mutex; once
/// handed over, its memory belongs to an immutable `Data`. Sendable so the
/// engine's buffer can be appended under the lock (region isolation would
/// otherwise tie the lock's state to the engine callback's region).
private final class CollectBuffer: @unchecked Sendable {
    private var base: UnsafeMutableRawPointer?
    private let capacity: Int
    private(set) var count = 0
    /// Bytes from the start whose pages are faulted in (`BodyBufferPool.populate`).
    private var populated: Int
    private let populateWindow: Int
    /// nil: `BodyBufferPool.shared` (see `CollectedBody.pool`).
    private let pool: BodyBufferPool?
    /// Whether the bytes go in with streaming stores (`streaming_copy`).
    private var streams: Bool { capacity >= CollectedBody.streamingThreshold }

    init?(capacity wanted: Int, populateWindow: Int, pool: BodyBufferPool?) {
        let capacity = BodyBufferPool.capacity(for: wanted)
        guard let memory = (pool ?? .shared).take(capacity: capacity, populating: populateWindow) else { return nil }
        self.base = memory
        self.capacity = capacity
        self.populateWindow = populateWindow
        self.pool = pool
        populated = min(capacity, populateWindow)
    }

    deinit {
        if let base { (pool ?? .shared).give(base, capacity: capacity) }
    }

    /// False when the bytes do not fit; nothing is copied then.
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base, count + bytes.count <= capacity else { return false }
        if count + bytes.count > populated {
            // The next window of a large buffer, in one call (see `BodyBufferPool.populate`).
            let page = BodyBufferPool.pageSize
            let wanted = max(count + bytes.count, populated + populateWindow)
            let end = min(capacity, (wanted + page - 1) / page * page)
            BodyBufferPool.populate(base + populated, bytes: end - populated)
            populated = end
        }
        if let source = bytes.baseAddress {
            if streams {
                streaming_copy(base + count, source, bytes.count)
            } else {
                (base + count).copyMemory(from: source, byteCount: bytes.count)
            }
        }
        count += bytes.count
        return true
    }

    func isResident(_ range: Range<Int>) -> Bool {
        guard let base, range.lowerBound >= 0, range.upperBound <= capacity else { return false }
        let page = BodyBufferPool.pageSize
        let first = range.lowerBound / page * page
        let pages = (range.upperBound - first + page - 1) / page
        var vector = [UInt8](repeating: 0, count: pages)
        guard mincore(base + first, range.upperBound - first, &vector) == 0 else { return false }
        return vector.allSatisfy { $0 & 1 == 1 }
    }

    func copy() -> Data {
        guard let base else { return Data() }
        return Data(bytes: base, count: count)
    }

    /// The memory now belongs to the returned `Data`, which gives it back to
    /// the pool when the last copy goes away.
    func handOver() -> Data {
        guard let base else { return Data() }
        self.base = nil
        let (capacity, pool) = (capacity, pool)
        return Data(bytesNoCopy: base, count: count, deallocator: .custom { pointer, _ in
            (pool ?? .shared).give(pointer, capacity: capacity)
        })
    }
}
