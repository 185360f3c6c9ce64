/// A FIFO of task events that knows how many body bytes it holds.
/// An array with a moving head, compacted when the dead prefix dominates, so a
/// push and a pop are O(1) amortised without a dependency on swift-collections.
struct EventQueue {
    private var storage: [TaskEvent] = []
    private var head = 0
    private(set) var bufferedBytes = 0

    var isEmpty: Bool { head == storage.count }

    mutating func append(_ event: TaskEvent) {
        bufferedBytes += event.bufferedByteCount
        storage.append(event)
    }

    mutating func popFirst() -> TaskEvent? {
        guard head < storage.count else { return nil }
        let event = storage[head]
        head += 1
        bufferedBytes -= event.bufferedByteCount
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
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
        return chunks
    }

    /// Puts events before a queued trailing `metrics` event (or at the end).
    mutating func insertBeforeMetrics(_ events: [TaskEvent]) {
        if let last = storage.indices.last, last >= head, case .metrics = storage[last] {
            storage.insert(contentsOf: events, at: last)
        } else {
            storage.append(contentsOf: events)
        }
    }

    mutating func removeAll() {
        storage.removeAll()
        head = 0
        bufferedBytes = 0
    }
}
