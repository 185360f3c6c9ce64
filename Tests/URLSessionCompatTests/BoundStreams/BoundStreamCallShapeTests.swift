#if canImport(FoundationNetworking)
import URLSessionCompat
import Foundation
import Testing

/// The calls code already makes on Linux, and the ones Apple code makes,
/// compile (without ambiguity) next to the raw-pointer `write` and the CF names.
@Suite struct BoundStreamCallShapeTests {
    @Test func everyWriteShapeCompilesAndWrites() throws {
        let stream = OutputStream(toMemory: ())
        stream.open()
        var byteArray: [UInt8] = [1, 2]
        let array: [UInt8] = [3, 4]
        let data = Data([5, 6])
        let typed = [UInt8]([7])
        typed.withUnsafeBufferPointer { buffer in
            let pointer = buffer.baseAddress!
            #expect(stream.write(pointer as UnsafePointer<UInt8>, maxLength: 1) == 1)
        }
        #expect(stream.write(&byteArray, maxLength: byteArray.count) == 2)
        #expect(stream.write(array, maxLength: array.count) == 2)
        data.withUnsafeBytes { #expect(stream.write($0.baseAddress!, maxLength: data.count) == 2) }
        data.withUnsafeBytes { #expect(stream.write($0.bindMemory(to: UInt8.self).baseAddress!, maxLength: $0.count) == 2) }
        // Raw memory of another type: rebound only for the call.
        let words: [UInt16] = [0x0A0B]
        words.withUnsafeBytes { #expect(stream.write($0.baseAddress!, maxLength: $0.count) == 2) }
        let written = try #require(stream.property(forKey: .dataWrittenToMemoryStreamKey) as? Data)
        #expect(Array(written.prefix(9)) == [7, 1, 2, 3, 4, 5, 6, 5, 6])
        #expect(written.count == 11)
    }

    @Test func appleDeclarationsCompileUnchanged() {
        var inputStream: InputStream?
        var outputStream: OutputStream?
        let bufferSize = 4096
        Stream.getBoundStreams(withBufferSize: bufferSize, inputStream: &inputStream, outputStream: &outputStream)
        guard let inputStream, let outputStream else {
            Issue.record("no streams")
            return
        }
        let queue = DispatchQueue(label: "streams")
        CFWriteStreamSetDispatchQueue(outputStream as CFWriteStream, queue)
        CFReadStreamSetDispatchQueue(inputStream as CFReadStream, queue)
        CFWriteStreamSetDispatchQueue(outputStream, nil)
        outputStream.open()
        let bytes: [UInt8] = [1, 2, 3]
        let written = bytes.withUnsafeBytes { outputStream.write($0.baseAddress!, maxLength: bytes.count) }
        #expect(written == 3)
        outputStream.close()
        inputStream.open()
        var back = [UInt8](repeating: 0, count: 8)
        #expect(inputStream.read(&back, maxLength: back.count) == 3)
        #expect(inputStream.read(&back, maxLength: back.count) == 0)
    }
}
#endif
