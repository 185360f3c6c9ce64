internal import CurlEngine
import Foundation

/// Feeds a request's `InputStream` into a hop's `BodyStream` from a thread
/// of its own: an InputStream's reads may block, which no engine thread and
/// no thread of the cooperative pool may do.
enum InputStreamPump {
    static func start(reading box: InputStreamBox, into stream: BodyStream) {
        let thread = Thread { pump(box.stream, into: stream) }
        thread.name = "AsyncURLSession.BodyStreamPump"
        thread.start()
    }

    private static func pump(_ input: InputStream, into stream: BodyStream) {
        input.open()
        defer { input.close() }
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while !stream.isCancelled {
            let count = input.read(&buffer, maxLength: buffer.count)
            if count < 0 {
                let reason = input.streamError.map { "\($0)" } ?? "unknown error"
                stream.finish(error: URLError.make(
                    .requestBodyStreamExhausted, url: nil, reason: "Reading the request body stream failed: \(reason)"))
                return
            }
            if count == 0 {
                stream.finish()
                return
            }
            guard stream.writeBlocking(Data(buffer[0..<count])) else { return }
        }
    }
}
