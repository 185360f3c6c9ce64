import AsyncURLSession
import Foundation

/// Prints the status line and headers, then writes the body to standard
/// output or a file, with a progress bar on standard error for files.
struct BodyWriter {
    let outputPath: String?
    let silent: Bool
    var printsHead = true
    /// Bytes per second at most; the transfer pauses to match a slow reader.
    var limitRate: Int?

    func write(_ task: SessionTask) async throws {
        let sink = try openSink()
        defer { if outputPath != nil { try? sink.close() } }
        var progress = ProgressBar(label: outputPath.map { ($0 as NSString).lastPathComponent } ?? "body")
        var received: Int64 = 0
        var expected: Int64 = -1
        let started = ContinuousClock.now
        for try await event in task.events {
            switch event {
            case .response(let response, _):
                expected = response.expectedContentLength
                if !silent && printsHead { Self.printHead(response, toStandardOutput: outputPath != nil) }
            case .data(let chunk):
                received += Int64(chunk.count)
                do {
                    try sink.write(contentsOf: chunk)
                } catch {
                    task.cancel()
                    throw FetchError("cannot write the body to '\(outputPath ?? "stdout")': \(error.localizedDescription)")
                }
                if outputPath != nil && !silent { progress.update(received: received, expected: expected) }
                if let limitRate, limitRate > 0 {
                    // Sleep until the average rate is back under the limit.
                    let due = Duration.seconds(Double(received) / Double(limitRate))
                    let elapsed = ContinuousClock.now - started
                    if due > elapsed { try await Task.sleep(for: due - elapsed) }
                }
            default:
                break
            }
        }
        if outputPath != nil && !silent { progress.finish(received: received, expected: expected) }
    }

    private func openSink() throws -> FileHandle {
        guard let outputPath else { return FileHandle.standardOutput }
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
            let handle = FileHandle(forWritingAtPath: outputPath)
        else {
            throw FetchError("cannot create the output file '\(outputPath)' (check the folder exists and is writable)")
        }
        return handle
    }

    /// Status and headers go to standard output when the body goes to a file,
    /// and to standard error when the body goes to standard output, so that
    /// `fetch URL > file` saves exactly the body.
    static func printHead(_ response: HTTPURLResponse, toStandardOutput: Bool) {
        var text = "HTTP \(response.statusCode) \(HTTPURLResponse.localizedString(forStatusCode: response.statusCode))\n"
        for (name, value) in response.allHeaderFields.sorted(by: { "\($0.key)" < "\($1.key)" }) {
            text += "\(name): \(value)\n"
        }
        if toStandardOutput {
            print(text)
        } else {
            FileHandle.standardError.write(Data((text + "\n").utf8))
        }
    }
}
