/// A FIFO of task events that knows how many body bytes it holds.
/// An array with a moving head, compacted when the dead prefix dominates, so a
/// push and a pop are O(1) amortised without a dependency on swift-collections.
struct EventQueue {
    private var storage: [TaskEvent] = []
    private var head = 0
    private(set) var bufferedBytes = 0

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }

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

    mutating func removeAll() {
        storage.removeAll()
        head = 0
        bufferedBytes = 0
    }
}
