import Foundation

/// A FIFO of task events that knows how many body bytes it holds.
/// An array with a moving head, compacted when the dead prefix dominates, so a
/// push and a pop are O(1) amortised without a dependency on swift-collections.
///
/// Body chunks coalesce: libcurl hands one 64 KiB read over as four 16 KiB
/// writes in a row, and a chunk queued with room reserved takes the writes
/// that follow it while the consumer has not taken it yet. A consumer behind
/// the network then gets one event (and the engine makes one allocation) per
/// read instead of four.
struct EventQueue {
    private var storage: [TaskEvent] = []
    private var head = 0
    private(set) var bufferedBytes = 0
    /// Bytes the last event, a queued data chunk, can still take without
    /// growing; 0 when the last event is anything else.
    private var openChunkRoom = 0
    static let initialCapacity = 4

    var isEmpty: Bool { head == storage.count }

    mutating func append(_ event: TaskEvent) {
        bufferedBytes += event.bufferedByteCount
        // A small GET queues three events (response, body, metrics); grown
        // from empty, the array was allocated twice per task on the engine
        // thread (and freed on the consumer's).
        if storage.capacity == 0 { storage.reserveCapacity(Self.initialCapacity) }
        storage.append(event)
        openChunkRoom = 0
    }

    /// Queues a body chunk whose storage can take `room` more bytes.
    mutating func appendChunk(_ chunk: Data, room: Int) {
        append(.data(chunk))
        openChunkRoom = room
    }

    /// Appends `count` bytes (written by `write`) to the last queued chunk if
    /// it has the room, in place. Returns whether it did.
    mutating func appendToOpenChunk(count: Int, _ write: (inout Data) -> Void) -> Bool {
        guard count <= openChunkRoom, head < storage.count, case .data(var chunk) = storage[storage.count - 1] else {
            return false
        }
        // Drop the queue's reference first, so the chunk is unique and grows
        // in place instead of being copied.
        storage[storage.count - 1] = .data(Data())
        write(&chunk)
        storage[storage.count - 1] = .data(chunk)
        bufferedBytes += count
        openChunkRoom -= count
        return true
    }

    mutating func popFirst() -> TaskEvent? {
        guard head < storage.count else { return nil }
        let event = storage[head]
        head += 1
        bufferedBytes -= event.bufferedByteCount
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
            openChunkRoom = 0
        } else if head >= 64 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return event
    }

    /// Folds a progress event into a progress event of the same kind at the
    /// tail, if there is one. Returns whether it did.
    mutating func mergeProgress(_ event: TaskEvent) -> Bool {
        guard head < storage.count, let last = storage.last else { return false }
        switch (last, event) {
        case (.uploadProgress(let old), .uploadProgress(let new)):
            storage[storage.count - 1] = .uploadProgress(old.merged(with: new))
            return true
        case (.downloadProgress(let old), .downloadProgress(let new)):
            storage[storage.count - 1] = .downloadProgress(old.merged(with: new))
            return true
        default:
            return false
        }
    }

    /// Takes out the queued body chunks (for a data task that becomes a
    /// download: they go to the file), keeping every other event.
    mutating func removeData() -> [Data] {
        var chunks: [Data] = []
        var kept: [TaskEvent] = []
        for event in storage[head...] {
            if case .data(let chunk) = event { chunks.append(chunk) } else { kept.append(event) }
        }
        storage = kept
        head = 0
        bufferedBytes = 0
        openChunkRoom = 0
        return chunks
    }

    /// The queued body chunks, left in the queue.
    var dataChunks: [Data] {
        storage[head...].compactMap { if case .data(let chunk) = $0 { chunk } else { nil } }
    }

    /// Puts events before a queued trailing `metrics` event (or at the end).
    mutating func insertBeforeMetrics(_ events: [TaskEvent]) {
        openChunkRoom = 0
        if let last = storage.indices.last, last >= head, case .metrics = storage[last] {
            storage.insert(contentsOf: events, at: last)
        } else {
            storage.append(contentsOf: events)
        }
    }

    /// Takes every queued event out (the caller releases them).
    mutating func takeAll() -> [TaskEvent] {
        let events = Array(storage[head...])
        removeAll()
        return events
    }

    mutating func removeAll() {
        storage.removeAll()
        head = 0
        bufferedBytes = 0
        openChunkRoom = 0
    }
}
