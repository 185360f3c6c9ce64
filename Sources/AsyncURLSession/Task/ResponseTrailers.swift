internal import CurlEngine

/// The fields a response sent after its body: the trailer section of a
/// chunked HTTP/1.1 body or of an HTTP/2 stream (checksums, timings, a
/// final status). `task.events` delivers them as `.trailers` after the last
/// `.data`; `SessionTask.trailers` keeps them once the task has ended
/// (for `collectedData()` and `bytes(for:)` users).
public struct ResponseTrailers: Sendable, Equatable, Sequence {
    public struct Field: Sendable, Equatable {
        public let name: String
        public let value: String
    }

    /// In the order received (HTTP/2's names are lowercase).
    public let fields: [Field]

    public init(_ fields: [(name: String, value: String)]) {
        self.fields = fields.map { Field(name: $0.name, value: $0.value) }
    }

    init(_ received: ResponseHeaderFields) {
        fields = received.indices.map { Field(name: received.name(at: $0), value: received.value(at: $0)) }
    }

    /// The value of the field called `name` (ASCII case ignored); repeated
    /// fields joined with ", ", as header fields are.
    public subscript(name: String) -> String? {
        let values = fields.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }
}
