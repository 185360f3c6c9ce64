import Foundation
import Synchronization
import Testing

@testable import AsyncURLSession

/// A download whose disk fills up stops with an error that says so, and
/// stops taking bytes: /dev/full answers every write with ENOSPC, as a full
/// file system does.
@Suite struct DownloadFileTests {
    private static func fullDisk() throws -> DownloadFile {
        let fd = open("/dev/full", O_WRONLY | O_CLOEXEC)
        try #require(fd >= 0, "/dev/full cannot be opened: \(String(cString: strerror(errno)))")
        return DownloadFile(fd: fd, url: URL(fileURLWithPath: "/dev/full"), name: "full", size: 0)
    }

    @Test func writeToAFullDisk_failsWithCannotWriteToFile_sayingTheDiskIsFull() throws {
        let file = try Self.fullDisk()
        defer { file.close() }
        // Queued: the write itself runs on the file's own queue.
        #expect(file.enqueue(Data(repeating: 1, count: 64 << 10)) == nil)
        let error = try #require(file.drain(), "a write to a full disk reported no error")
        #expect(error.code == .cannotWriteToFile)
        #expect(error.localizedDescription.contains("The disk is full"))
        #expect(error.localizedDescription.contains("resume it"), "the error says what to do")
    }

    @Test func afterAFailedWrite_furtherBytesAreRefused_andAPausedTransferIsReleased() throws {
        let file = try Self.fullDisk()
        defer { file.close() }
        #expect(file.enqueue(Data(repeating: 1, count: 4096)) == nil)
        _ = file.drain()
        // The transfer learns of the failure from its next chunk and aborts.
        #expect(file.enqueue(Data(repeating: 2, count: 4096))?.code == .cannotWriteToFile)
        // A transfer paused behind the writer is resumed (to abort), never left waiting.
        let released = Mutex(false)
        file.whenDrained { released.withLock { $0 = true } }
        #expect(released.withLock { $0 })
    }
}
