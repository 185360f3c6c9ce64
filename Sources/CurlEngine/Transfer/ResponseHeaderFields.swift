import Glibc

/// A response's header fields as received: every name and (trimmed, unfolded)
/// value back to back in one byte buffer, plus where each one ends.
///
/// Why bytes: heads are parsed on the engine thread, which serves every
/// transfer, and two Strings per field were among the largest costs of a
/// small request. Consumers mostly look up a field or two by name, or compare
/// a head with a recent one (ResponseInterning); both work on the bytes, and
/// a String is made only for a field someone reads.
///
/// As a collection it yields `(name, value)` pairs decoded on access, with
/// `ResponseHeadParser.text`'s rules, as they were decoded when parsed.
package struct ResponseHeaderFields: RandomAccessCollection, Equatable, Sendable {
    /// Field i's name starts where field i - 1's value ends.
    private var bytes: [UInt8] = []
    /// Two per field: where its name ends, where its value ends. 32 bits are
    /// plenty: Transfer refuses heads above 256 KiB.
    private var ends: [UInt32] = []
    /// Names are tokens, so ASCII; when one is not, names are compared as
    /// decoded Strings, since two byte sequences can decode alike.
    private var namesAreASCII = true

    package init() {}

    /// Fields given as text, stored as their UTF-8.
    package init(_ fields: some Sequence<(name: String, value: String)>) {
        for field in fields { append(name: field.name.utf8, value: field.value.utf8) }
    }

    package var startIndex: Int { 0 }
    package var endIndex: Int { ends.count / 2 }

    package subscript(position: Int) -> (name: String, value: String) {
        (name: name(at: position), value: value(at: position))
    }

    package func name(at index: Int) -> String { text(nameRange(index)) }
    package func value(at index: Int) -> String { text(valueRange(index)) }

    /// Size of every name and value together, as received.
    package var byteCount: Int { bytes.count }

    /// How many fields are named `name`, ignoring ASCII case.
    package func count(named name: String) -> Int {
        var count = 0
        forEachIndex(named: name) { _ in count += 1 }
        return count
    }

    /// The values of the fields named `name` (ASCII case ignored), each on
    /// its own, in order (Set-Cookie values hold commas: never join them).
    package func values(named name: String) -> [String] {
        var result: [String] = []
        forEachIndex(named: name) { result.append(self.value(at: $0)) }
        return result
    }

    /// The values of the fields named `name` (ASCII case ignored), joined
    /// with ", " in order as HTTPURLResponse joins repeated fields; nil when
    /// there are none.
    package func value(named name: String) -> String? {
        var result: String?
        forEachIndex(named: name) { index in
            let value = self.value(at: index)
            result = result.map { $0 + ", " + value } ?? value
        }
        return result
    }

    /// The first field named like field `index` (ASCII case ignored):
    /// `index` itself when no earlier field is.
    package func firstIndex(sameNameAs index: Int) -> Int {
        guard namesAreASCII else {
            let name = self.name(at: index)
            return (0..<index).first { self.name(at: $0).equalsIgnoringASCIICase(name) } ?? index
        }
        return bytes.withUnsafeBufferPointer { all in
            let name = UnsafeBufferPointer(rebasing: all[nameRange(index)])
            return (0..<index).first { Self.equalFolded(UnsafeBufferPointer(rebasing: all[nameRange($0)]), name) }
                ?? index
        }
    }

    /// Byte for byte, field boundaries included: an interning hit must not
    /// need any String.
    ///
    /// Compared with memcmp, and not read at all when both share buffers: a
    /// repeated head is compared on every response (`HeadBuffers`,
    /// `ResponseInterning`).
    package static func == (lhs: Self, rhs: Self) -> Bool {
        sameElements(lhs.ends, rhs.ends) && sameElements(lhs.bytes, rhs.bytes)
    }

    /// Whether both use the same buffers (tests).
    func sharesBuffers(with other: ResponseHeaderFields) -> Bool {
        bytes.withUnsafeBufferPointer { mine in
            other.bytes.withUnsafeBufferPointer { $0.baseAddress == mine.baseAddress }
        } && ends.withUnsafeBufferPointer { mine in
            other.ends.withUnsafeBufferPointer { $0.baseAddress == mine.baseAddress }
        }
    }

    /// Empty, keeping the buffers' capacity for the next head.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        namesAreASCII = true
    }

    /// Room for a typical head, so that it is parsed without regrowing.
    mutating func reserveTypicalCapacity() {
        bytes.reserveCapacity(512)
        ends.reserveCapacity(32)
    }

    // MARK: Building (the parser)

    mutating func append(name: some Collection<UInt8>, value: some Collection<UInt8>) {
        if namesAreASCII, name.contains(where: { $0 >= 0x80 }) { namesAreASCII = false }
        bytes.append(contentsOf: name)
        ends.append(UInt32(bytes.count))
        bytes.append(contentsOf: value)
        ends.append(UInt32(bytes.count))
    }

    /// A "Name: value" line (no CR or LF) as a field, the value trimmed of
    /// spaces and tabs; a line without a colon is skipped.
    mutating func append(line: UnsafeRawBufferPointer) {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        append(
            name: UnsafeRawBufferPointer(rebasing: line[0..<colon]),
            value: ResponseHeadParser.trimmed(UnsafeRawBufferPointer(rebasing: line[(colon + 1)...])))
    }

    /// Obsolete line folding: `continuation` joins the last value after one
    /// space. The last value is the end of the buffer, so this appends.
    mutating func unfoldIntoLastValue(_ continuation: UnsafeRawBufferPointer) {
        let last = count - 1
        let valueStart = Int(ends[2 * last])
        if continuation.contains(where: { $0 >= 0x80 }) || bytes[valueStart...].contains(where: { $0 >= 0x80 }) {
            // Each line is decoded on its own (a UTF-8 line followed by a
            // Latin-1 one keeps its UTF-8 reading), but the joined bytes
            // would be decoded at once: store the joined text instead.
            let joined = value(at: last) + " " + ResponseHeadParser.text(continuation)
            bytes.replaceSubrange(valueStart..., with: joined.utf8)
        } else {
            bytes.append(UInt8(ascii: " "))
            bytes.append(contentsOf: continuation)
        }
        ends[2 * last + 1] = UInt32(bytes.count)
    }

    // MARK: Private

    private static func sameElements<Element: BitwiseCopyable>(_ lhs: [Element], _ rhs: [Element]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.withUnsafeBytes { left in
            rhs.withUnsafeBytes { right in
                left.baseAddress == right.baseAddress || left.count == 0
                    || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
            }
        }
    }

    private func nameRange(_ index: Int) -> Range<Int> {
        (index == 0 ? 0 : Int(ends[2 * index - 1]))..<Int(ends[2 * index])
    }

    private func valueRange(_ index: Int) -> Range<Int> {
        Int(ends[2 * index])..<Int(ends[2 * index + 1])
    }

    private func text(_ range: Range<Int>) -> String {
        bytes.withUnsafeBytes { ResponseHeadParser.text(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    private func forEachIndex(named name: String, _ body: (Int) -> Void) {
        guard namesAreASCII else {
            for index in indices where self.name(at: index).equalsIgnoringASCIICase(name) { body(index) }
            return
        }
        var name = name
        name.withUTF8 { query in
            bytes.withUnsafeBufferPointer { all in
                for index in indices where Self.equalFolded(UnsafeBufferPointer(rebasing: all[nameRange(index)]), query) {
                    body(index)
                }
            }
        }
    }

    /// As `String.equalsIgnoringASCIICase`: only ASCII letters fold.
    private static func equalFolded(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for index in 0..<lhs.count where lhs[index] != rhs[index] {
            let folded = lhs[index] | 0x20
            guard folded == rhs[index] | 0x20, folded >= UInt8(ascii: "a"), folded <= UInt8(ascii: "z") else {
                return false
            }
        }
        return true
    }
}
