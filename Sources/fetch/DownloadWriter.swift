import AsyncURLSession
import Foundation

/// `-o FILE`: a download task (the body goes to disk, never to memory), a
/// progress bar from its progress events, and the finished file moved to FILE.
struct DownloadWriter {
    let destination: String
    let silent: Bool

    func run(_ task: SessionTask) async throws {
        var progress = ProgressBar(label: (destination as NSString).lastPathComponent)
        var last = TransferProgress(bytes: 0, totalBytes: 0, totalBytesExpected: -1)
        for try await event in task.events {
            switch event {
            case .response(let response, _):
                if !silent { BodyWriter.printHead(response, toStandardOutput: true) }
            case .downloadProgress(let step):
                last = step
                if !silent { progress.update(received: step.totalBytes, expected: step.totalBytesExpected) }
            case .downloaded(let location):
                try move(location)
            default:
                break
            }
        }
        if !silent { progress.finish(received: last.totalBytes, expected: last.totalBytesExpected) }
    }

    private func move(_ location: URL) throws {
        let target = URL(fileURLWithPath: destination)
        do {
            if FileManager.default.fileExists(atPath: target.path) {
                try FileManager.default.removeItem(at: target)
            }
            try FileManager.default.moveItem(at: location, to: target)
        } catch {
            throw FetchError("cannot save the download to '\(destination)': \(error.localizedDescription) (check the folder exists and is writable)")
        }
    }
}
