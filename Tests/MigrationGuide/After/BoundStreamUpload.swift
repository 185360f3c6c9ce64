import Foundation
import URLSessionCompat

/// MIGRATION.md's streamed upload as Apple's guide writes it: a bound
/// stream pair, its input handed to the task, its output written from the
/// stream's `.hasSpaceAvailable` events on a dispatch queue.
final class BoundStreamUploader: NSObject, URLSessionDataDelegate, StreamDelegate, @unchecked Sendable {
    // @unchecked: `offset` and `output` are touched only on `streamQueue`
    // (the output's events); `received` and `finish` only on the session's
    // serial delegate queue.
    private let body: Data
    private let streamQueue = DispatchQueue(label: "BoundStreamUploader")
    private var offset = 0
    private var output: OutputStream?
    private var received = Data()
    private var finish: (@Sendable (Result<Data, any Error>) -> Void)?

    init(body: Data) {
        self.body = body
    }

    func urlSession(_ session: URLSession, task: URLSessionTask,
                    needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void) {
        var inputStream: InputStream?
        var outputStream: OutputStream?
        Stream.getBoundStreams(withBufferSize: 4096, inputStream: &inputStream, outputStream: &outputStream)
        guard let inputStream, let outputStream else { return completionHandler(nil) }
        streamQueue.sync {
            offset = 0
            output = outputStream
        }
        outputStream.delegate = self
        CFWriteStreamSetDispatchQueue(outputStream as CFWriteStream, streamQueue)
        outputStream.open()
        completionHandler(inputStream)
    }

    func stream(_ stream: Stream, handle event: Stream.Event) {
        guard let output = stream as? OutputStream, output === self.output else { return }
        switch event {
        case .hasSpaceAvailable:
            guard offset < body.count else { return output.close() }
            let written = body[offset...].withUnsafeBytes { output.write($0.baseAddress!, maxLength: $0.count) }
            if written > 0 { offset += written }
        case .errorOccurred, .endEncountered:
            output.close()
        default:
            break
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        received.append(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        finish?(error.map { .failure($0) } ?? .success(received))
        finish = nil
    }

    /// Sends `body` to `url` (which echoes it) and returns the response body.
    func upload(to url: URL, completion: @escaping @Sendable (Result<Data, any Error>) -> Void) {
        let session = URLSession(configuration: .ephemeral, delegate: self, delegateQueue: nil)
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        let task = session.uploadTask(withStreamedRequest: request)
        session.delegateQueue.addOperation {
            self.finish = completion
            task.resume()
        }
        session.finishTasksAndInvalidate()
    }
}
