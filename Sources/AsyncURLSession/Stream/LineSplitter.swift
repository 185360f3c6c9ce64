import Foundation

/// Splits UTF-8 bytes into lines as Apple's `AsyncLineSequence` does: lines
/// end at LF, CR, CR LF, NEL (U+0085), LINE SEPARATOR (U+2028) or
/// PARAGRAPH SEPARATOR (U+2029); separators are not part of a line; empty
/// lines are skipped; a last line without a separator still counts. Bytes
/// are fed in chunks of any size, so a separator may straddle two chunks.
/// A value type with no I/O, so every rule is a unit test.
struct LineSplitter {
    private var line: [UInt8] = []
    /// The start of a separator seen at the end of a chunk, waiting for the
    /// bytes that tell what it is.
    private var pending: [UInt8] = []

    /// The lines these bytes complete, in order.
    mutating func feed<Bytes: Collection>(_ bytes: Bytes) -> [String] where Bytes.Element == UInt8 {
        var lines: [String] = []
        for byte in bytes { take(byte, into: &lines) }
        return lines
    }

    /// The last line, if the body did not end with a separator.
    mutating func finish() -> String? {
        var lines: [String] = []
        // A pending prefix that never became a separator is text, except a
        // CR, which ended its line already.
        let leftover = pending.first == 0x0D ? pending.dropFirst() : pending[...]
        pending = []
        line.append(contentsOf: leftover)
        endLine(into: &lines)
        return lines.first
    }

    private mutating func take(_ byte: UInt8, into lines: inout [String]) {
        if !pending.isEmpty {
            pending.append(byte)
            switch pending {
            case [0x0D, 0x0A]:  // CR LF: the CR ended the line already
                pending = []
                return
            case [0xC2, 0x85], [0xE2, 0x80, 0xA8], [0xE2, 0x80, 0xA9]:
                pending = []
                endLine(into: &lines)
                return
            case [0xE2], [0xE2, 0x80]:
                return
            default:
                // Not a separator: the held bytes are text, then look again
                // at this byte on its own.
                let held = pending.dropLast()
                pending = []
                if held.first == 0x0D {
                    // A lone CR ended its line; what follows starts a new one.
                    line.append(contentsOf: held.dropFirst())
                } else {
                    line.append(contentsOf: held)
                }
                take(byte, into: &lines)
                return
            }
        }
        switch byte {
        case 0x0A:
            endLine(into: &lines)
        case 0x0D:
            endLine(into: &lines)
            pending = [0x0D]
        case 0xC2, 0xE2:
            pending = [byte]
        default:
            line.append(byte)
        }
    }

    private mutating func endLine(into lines: inout [String]) {
        guard !line.isEmpty else { return }
        lines.append(String(decoding: line, as: UTF8.self))
        line.removeAll(keepingCapacity: true)
    }
}
