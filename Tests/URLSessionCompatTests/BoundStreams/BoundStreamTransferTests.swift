#if canImport(FoundationNetworking)
@testable import URLSessionCompat
import Foundation
import Synchronization
import Testing
import TestSupport

/// Bytes through a bound pair with blocking reads and writes: order, the
/// end, the bound on memory, and what closing one end does to the other.
@Suite struct BoundStreamTransferTests {
    @Test func oneMiBInOddChunksArrivesWholeAndEnds() async throws {
        try await withTimeLimit(30) {
            let pair = try BoundPair(bufferSize: 4096)
            let payload = testPattern(count: 1 << 20)
            async let written = onThread("writer") { writeAll(payload, to: pair.output, chunks: [7, 13, 1, 4099, 517]) }
            async let read = onThread("reader") { readAll(from: pair.input, chunk: 997) }
            let (writtenCount, outcome) = await (written, read)
            #expect(writtenCount == payload.count)
            #expect(outcome.bytes.count == payload.count)
            #expect(outcome.bytes == payload)
            #expect(outcome.last == 0)
            #expect(outcome.status == .atEnd)
            // Reading again at the end: 0 again, not a block.
            var byte: UInt8 = 0
            #expect(pair.input.read(&byte, maxLength: 1) == 0)
            #expect(pair.input.hasBytesAvailable == false)
            #expect(pair.output.streamStatus == .closed)
            pair.input.close()
            #expect(pair.input.streamStatus == .closed)
        }
    }

    @Test func aWriterWithoutReaderBlocksAtTheCapacity() async throws {
        try await withTimeLimit(30) {
            let pair = try BoundPair(bufferSize: 1024)
            let buffer = try #require(pair.buffer)
            let payload = testPattern(count: 4096)
            let accepted = Mutex(0)
            let writer = Task {
                await onThread("writer") { () -> Bool in
                    pair.output.open()
                    var offset = 0
                    while offset < payload.count {
                        let count = payload.withUnsafeBufferPointer {
                            pair.output.write($0.baseAddress! + offset, maxLength: min(100, payload.count - offset))
                        }
                        guard count > 0 else { return false }
                        offset += count
                        accepted.withLock { $0 += count }
                    }
                    pair.output.close()
                    return true
                }
            }
            // The writer fills the buffer and then waits in `write`.
            try await eventually(every: .milliseconds(1)) { buffer.snapshot.waitingWriters == 1 }
            let held = buffer.snapshot
            #expect(held.count == 1024)
            #expect(held.count <= held.capacity)
            #expect(accepted.withLock { $0 } == 1024)
            #expect(pair.output.hasSpaceAvailable == false)

            // A reader frees space; the writer goes on; the buffer never holds more.
            let outcome = await onThread("reader") { () -> (ReadOutcome, Int) in
                pair.input.open()
                var outcome = ReadOutcome()
                var most = 0
                var chunk = [UInt8](repeating: 0, count: 300)
                while true {
                    most = max(most, buffer.snapshot.count)
                    let count = pair.input.read(&chunk, maxLength: chunk.count)
                    outcome.last = count
                    guard count > 0 else { break }
                    outcome.bytes += chunk[0..<count]
                }
                return (outcome, most)
            }
            #expect(await writer.value)
            #expect(outcome.0.bytes == payload)
            #expect(outcome.0.last == 0)
            #expect(outcome.1 <= 1024)
        }
    }

    @Test func closingTheInput_endsABlockedWrite_andTellsTheOutputItsEnd() async throws {
        try await withTimeLimit(30) {
            let pair = try BoundPair(bufferSize: 16)
            let buffer = try #require(pair.buffer)
            let error = OneShot<Bool>()
            let recorder = EventRecorder { _, event in
                if event == .endEncountered { error.give(true) }
            }
            pair.output.delegate = recorder
            CFWriteStreamSetDispatchQueue(pair.output, DispatchQueue(label: "output events"))
            pair.input.open()
            let results = Task {
                await onThread("writer") { () -> [Int] in
                    pair.output.open()
                    let bytes = [UInt8](repeating: 7, count: 64)
                    return [
                        pair.output.write(bytes, maxLength: bytes.count),  // fills the 16 bytes
                        pair.output.write(bytes, maxLength: bytes.count),  // blocks, then ends
                    ]
                }
            }
            try await eventually(every: .milliseconds(1)) { buffer.snapshot.waitingWriters == 1 }
            pair.input.close()
            #expect(await results.value == [16, 0])
            #expect(await error.value)
            // As Apple's: the end, not an error (the reader went away).
            #expect(pair.output.streamStatus == .atEnd)
            #expect(pair.output.streamError == nil)
            #expect(pair.output.hasSpaceAvailable == false)
            #expect(recorder.events.first == .openCompleted)
            #expect(recorder.events.last == .endEncountered)
            #expect(!recorder.events.contains(.errorOccurred))
            // And later writes end at once.
            let byte: [UInt8] = [1]
            #expect(pair.output.write(byte, maxLength: 1) == 0)
        }
    }

    @Test func closingTheInputFromAnotherThreadEndsABlockedRead() async throws {
        try await withTimeLimit(30) {
            let pair = try BoundPair(bufferSize: 64)
            let buffer = try #require(pair.buffer)
            pair.output.open()
            let result = Task {
                await onThread("reader") { () -> Int in
                    pair.input.open()
                    var byte: UInt8 = 0
                    return pair.input.read(&byte, maxLength: 1)
                }
            }
            try await eventually(every: .milliseconds(1)) { buffer.snapshot.waitingReaders == 1 }
            pair.input.close()
            // -1, not 0: a cut-off body must not look complete.
            #expect(await result.value == -1)
            #expect(pair.input.streamStatus == .closed)
            let failure = try #require(pair.input.streamError as? NSError)
            #expect(failure.code == Int(ECANCELED))
        }
    }

    @Test func closingTheOutputEndsABlockedRead() async throws {
        try await withTimeLimit(30) {
            let pair = try BoundPair(bufferSize: 64)
            let buffer = try #require(pair.buffer)
            pair.output.open()
            let result = Task { await onThread("reader") { readAll(from: pair.input) } }
            try await eventually(every: .milliseconds(1)) { buffer.snapshot.waitingReaders == 1 }
            pair.output.close()
            let outcome = await result.value
            #expect(outcome.last == 0)
            #expect(outcome.bytes.isEmpty)
            #expect(outcome.status == .atEnd)
        }
    }

    @Test func closingTheOutputFromAnotherThreadEndsABlockedWrite() async throws {
        try await withTimeLimit(30) {
            let pair = try BoundPair(bufferSize: 4)
            let buffer = try #require(pair.buffer)
            let results = Task {
                await onThread("writer") { () -> [Int] in
                    pair.output.open()
                    let bytes = [UInt8](repeating: 1, count: 8)
                    return [pair.output.write(bytes, maxLength: 8), pair.output.write(bytes, maxLength: 8)]
                }
            }
            try await eventually(every: .milliseconds(1)) { buffer.snapshot.waitingWriters == 1 }
            pair.output.close()
            #expect(await results.value == [4, -1])
            #expect((pair.output.streamError as? NSError)?.code == Int(ECANCELED))
            // What was written before the close still reaches the reader, then the end.
            let outcome = readAll(from: pair.input)
            #expect(outcome.bytes == [1, 1, 1, 1])
            #expect(outcome.last == 0)
        }
    }

    @Test func releasingTheOutputEndsTheInput() throws {
        var input: InputStream?
        var output: OutputStream?
        Stream.getBoundStreams(withBufferSize: 8, inputStream: &input, outputStream: &output)
        output?.open()
        let bytes: [UInt8] = [1, 2, 3]
        #expect(output?.write(bytes, maxLength: 3) == 3)
        output = nil
        let reader = try #require(input)
        reader.open()
        var got = [UInt8](repeating: 0, count: 8)
        #expect(reader.read(&got, maxLength: 8) == 3)
        #expect(Array(got[0..<3]) == bytes)
        #expect(reader.read(&got, maxLength: 8) == 0)
        #expect(reader.streamStatus == .atEnd)
    }

    @Test func askingForTheOutputOnlyGivesOneWhoseReaderIsGone() throws {
        var output: OutputStream?
        Stream.getBoundStreams(withBufferSize: 8, inputStream: nil, outputStream: &output)
        let writer = try #require(output)
        writer.open()
        let bytes: [UInt8] = [1]
        #expect(writer.write(bytes, maxLength: 1) == 0)
        #expect(writer.streamStatus == .atEnd)
        #expect(writer.streamError == nil)
    }

    @Test func statusesAndRefusals() throws {
        let pair = try BoundPair(bufferSize: 0)  // kept at 1 byte
        var byte: UInt8 = 9
        #expect(pair.buffer?.capacity == 1)
        #expect(pair.input.streamStatus == .notOpen)
        #expect(pair.output.streamStatus == .notOpen)
        // Not open: -1 with an error, no block.
        #expect(pair.output.write(&byte, maxLength: 1) == -1)
        #expect((pair.output.streamError as? NSError)?.code == Int(EBADF))
        #expect(pair.input.read(&byte, maxLength: 1) == -1)
        #expect((pair.input.streamError as? NSError)?.code == Int(EBADF))
        #expect(pair.output.hasSpaceAvailable == false)

        pair.output.open()
        pair.input.open()
        #expect(pair.output.streamStatus == .open)
        #expect(pair.input.streamStatus == .open)
        #expect(pair.output.streamError == nil)
        #expect(pair.output.hasSpaceAvailable)
        #expect(pair.input.hasBytesAvailable == false)
        #expect(pair.output.write(&byte, maxLength: -1) == -1)
        #expect((pair.output.streamError as? NSError)?.code == Int(EINVAL))
        #expect(pair.output.write(&byte, maxLength: 5) == 1)  // what fits
        #expect(pair.output.hasSpaceAvailable == false)
        #expect(pair.input.hasBytesAvailable)

        var pointer: UnsafeMutablePointer<UInt8>?
        var length = 0
        #expect(pair.input.getBuffer(&pointer, length: &length) == false)
        #expect(pair.input.property(forKey: .fileCurrentOffsetKey) == nil)
        #expect(pair.output.property(forKey: .dataWrittenToMemoryStreamKey) == nil)
        #expect(pair.input.setProperty(NSNumber(value: 1), forKey: .fileCurrentOffsetKey) == false)
        #expect(pair.output.setProperty(nil, forKey: .networkServiceType) == false)

        var out: UInt8 = 0
        #expect(pair.input.read(&out, maxLength: 4) == 1)
        #expect(out == 9)
        pair.output.close()
        #expect(pair.input.streamStatus == .atEnd)
        // A read must be tried to learn the end: bytes "available" until then.
        #expect(pair.input.hasBytesAvailable)
        #expect(pair.input.read(&out, maxLength: 4) == 0)
        #expect(pair.input.hasBytesAvailable == false)
        #expect(pair.output.streamStatus == .closed)
        // Closed: writes refused, opening again does nothing.
        #expect(pair.output.write(&byte, maxLength: 1) == -1)
        pair.output.open()
        #expect(pair.output.streamStatus == .closed)
        pair.input.close()
        #expect(pair.input.streamStatus == .closed)
        #expect(pair.input.read(&out, maxLength: 1) == -1)
    }

    /// A read and a write go through one loop: its checks hold on both ends.
    @Test func lengthChecks_areTheSameOnBothEnds() throws {
        let pair = try BoundPair(bufferSize: 4)
        var byte: UInt8 = 7
        pair.output.open()
        pair.input.open()
        #expect(pair.input.read(&byte, maxLength: -1) == -1)
        #expect((pair.input.streamError as? NSError)?.code == Int(EINVAL))
        #expect(pair.output.write(&byte, maxLength: -1) == -1)
        #expect((pair.output.streamError as? NSError)?.code == Int(EINVAL))
        // 0 asks for nothing: no block (nothing to read, yet 0 at once), no end.
        #expect(pair.input.read(&byte, maxLength: 0) == 0)
        #expect(pair.output.write(&byte, maxLength: 0) == 0)
        #expect(pair.input.streamStatus == .open)
        #expect(pair.output.write(&byte, maxLength: 1) == 1)
        var out: UInt8 = 0
        #expect(pair.input.read(&out, maxLength: 1) == 1)
        #expect(out == 7)
    }

    @Test func theRequiredMemoryInitializerMakesAnOutputWithNoReader() throws {
        let pair = try BoundPair(bufferSize: 8)
        let other = type(of: pair.output).toMemory()
        other.open()
        let bytes: [UInt8] = [1]
        #expect(other.write(bytes, maxLength: 1) == 0)
        #expect(other.streamStatus == .atEnd)
    }
}
#endif
