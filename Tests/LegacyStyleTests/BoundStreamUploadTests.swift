import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport
import URLSessionCompat

/// Streamed uploads through a bound pair, as Apple's guide writes them.
@Suite struct BoundStreamUploadTests {
    @Test func cancellingAStreamedUpload_endsItsWriter() async throws {
        try await withServer { server in
            let writerEnded = Signal()
            let delegate = BoundPairProvider(onWriterEvent: { event in
                if event == .endEncountered { writerEnded.fire() }
            })
            var request = URLRequest(url: server.url("/echo-body"))
            request.httpMethod = "POST"
            let session = URLSession(configuration: legacyConfiguration(), delegate: delegate, delegateQueue: nil)
            let task = session.uploadTask(withStreamedRequest: request)
            task.resume()
            // The writer opened its end and wrote nothing: the body read waits.
            await delegate.provided.wait()
            task.cancel()
            await delegate.completed.wait()
            #expect((delegate.error as? URLError)?.code == .cancelled)
            // The session closed the input it was reading, as URLSession
            // does: the writer hears its end instead of waiting forever.
            await writerEnded.wait()
            session.finishTasksAndInvalidate()
        }
    }
}

/// Hands the task a bound input whose output nobody writes to.
private final class BoundPairProvider: NSObject, URLSessionDataDelegate, StreamDelegate, Sendable {
    private let output = Mutex<OutputStreamBox?>(nil)
    private let failure = Mutex<(any Error)?>(nil)
    private let onWriterEvent: @Sendable (Stream.Event) -> Void
    let provided = Signal()
    let completed = Signal()

    init(onWriterEvent: @escaping @Sendable (Stream.Event) -> Void) {
        self.onWriterEvent = onWriterEvent
    }

    var error: (any Error)? { failure.withLock { $0 } }

    func urlSession(
        _ session: URLSession, task: URLSessionTask,
        needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        var input: InputStream?
        var output: OutputStream?
        Stream.getBoundStreams(withBufferSize: 1024, inputStream: &input, outputStream: &output)
        guard let input, let output else { return completionHandler(nil) }
        self.output.withLock { $0 = OutputStreamBox(stream: output) }
        output.delegate = self
        CFWriteStreamSetDispatchQueue(output as CFWriteStream, DispatchQueue(label: "writer"))
        output.open()
        completionHandler(input)
        provided.fire()
    }

    func stream(_ stream: Stream, handle event: Stream.Event) {
        onWriterEvent(event)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        failure.withLock { $0 = error }
        completed.fire()
    }
}

/// Keeps the writer alive for the test. `@unchecked`: only stored and released.
private struct OutputStreamBox: @unchecked Sendable {
    let stream: OutputStream
}
