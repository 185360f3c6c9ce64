#if canImport(FoundationNetworking)
// The bytes a bound stream pair holds between its writer and its reader.
//
// A ring buffer whose memory grows on demand, up to the pair's capacity and
// never beyond it. Why it grows instead of allocating the capacity at once:
// `Stream.getBoundStreams(withBufferSize:)` takes the size from the caller,
// and a huge size (some code passes `Int.max` to mean "unbounded") must not
// crash the process in an allocation; memory follows the bytes actually
// waiting, and a pair that never fills never pays for its whole capacity.
//
// Not thread-safe: only `BoundStreamBuffer` touches it, under its lock.

struct BoundStreamRing: ~Copyable {
    /// The most bytes the ring holds; at least 1.
    let capacity: Int
    /// How many bytes wait to be read.
    private(set) var count = 0
    private var storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    /// Where the oldest byte is in `storage`.
    private var head = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    deinit {
        storage.deallocate()
    }

    var freeSpace: Int { capacity - count }

    /// Copies in as many of `length` bytes as fit; returns how many it took.
    mutating func append(from source: UnsafeRawPointer, length: Int) -> Int {
        let taken = min(length, freeSpace)
        guard taken > 0 else { return 0 }
        reserve(count + taken)
        guard let base = storage.baseAddress else { return 0 }
        var copied = 0
        var tail = (head + count) % storage.count
        while copied < taken {
            // Up to the end of the memory, then around to its start.
            let chunk = min(taken - copied, storage.count - tail)
            (base + tail).copyMemory(from: source + copied, byteCount: chunk)
            copied += chunk
            tail = (tail + chunk) % storage.count
        }
        count += taken
        return taken
    }

    /// Moves up to `length` of the oldest bytes out; returns how many.
    mutating func remove(into destination: UnsafeMutableRawPointer, length: Int) -> Int {
        let given = min(length, count)
        guard given > 0, let base = storage.baseAddress else { return 0 }
        var copied = 0
        while copied < given {
            let chunk = min(given - copied, storage.count - head)
            (destination + copied).copyMemory(from: base + head, byteCount: chunk)
            copied += chunk
            head = (head + chunk) % storage.count
        }
        count -= given
        if count == 0 { head = 0 }
        return given
    }

    /// Drops every byte and gives the memory back (the reader has gone).
    mutating func removeAll() {
        storage.deallocate()
        storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        head = 0
        count = 0
    }

    /// Makes room for `needed` bytes in all, keeping the waiting ones in order.
    private mutating func reserve(_ needed: Int) {
        guard needed > storage.count else { return }
        // Doubling keeps the copies amortized; the capacity caps it, and the
        // halving test keeps the doubling from overflowing.
        let doubled = storage.count > capacity / 2 ? capacity : storage.count * 2
        let size = min(capacity, max(needed, doubled, 4096))
        let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 1)
        if let target = grown.baseAddress {
            let waiting = count
            let moved = remove(into: target, length: waiting)
            count = moved
        }
        storage.deallocate()
        storage = grown
        head = 0
    }
}
#endif
