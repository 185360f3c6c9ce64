import Foundation

/// A HAR file that stays valid JSON after every entry: it is written as
/// its head, the entries, and a tail (`]}}`); each new entry is written
/// over the tail, followed by the tail again. Nothing is kept in memory
/// but the tail's offset, and each write goes straight to the kernel
/// (`FileHandle` does not buffer), so an entry is in the file when
/// `append` returns, whatever happens to the process afterwards.
struct HARFileWriter {
    let url: URL
    private let handle: FileHandle
    /// Where the tail starts: where the next entry goes.
    private var tailOffset: UInt64
    private(set) var entryCount = 0

    private static let tail = Data("\n]}}\n".utf8)

    /// Makes the file anew (one already there is replaced), with no entry yet.
    init(url: URL) throws {
        let head = try Self.head()
        var start = head
        start.append(Self.tail)
        try start.write(to: url)
        self.url = url
        handle = try FileHandle(forWritingTo: url)
        tailOffset = UInt64(head.count)
    }

    /// `{"log":{"version":"1.2","creator":{...},"pages":[],"entries":[`
    private static func head() throws -> Data {
        let creator = try JSONEncoder().encode(HAR.Creator.asyncURLSession)
        var head = Data(#"{"log":{"version":"1.2","creator":"#.utf8)
        head.append(creator)
        head.append(Data(#","pages":[],"entries":["#.utf8))
        head.append(0x0A)
        return head
    }

    /// The file's size once `entry` is added.
    func size(adding entry: Data) -> UInt64 {
        tailOffset + UInt64(entry.count + 2 + Self.tail.count)
    }

    mutating func append(_ entry: Data) throws {
        var piece = Data()
        piece.reserveCapacity(entry.count + 2 + Self.tail.count)
        if entryCount > 0 { piece.append(contentsOf: Array(",\n".utf8)) }
        piece.append(entry)
        let entryEnd = tailOffset + UInt64(piece.count)
        piece.append(Self.tail)
        try handle.seek(toOffset: tailOffset)
        try handle.write(contentsOf: piece)
        tailOffset = entryEnd
        entryCount += 1
    }

    func close() {
        try? handle.close()
    }
}
