// A program written as a user of the library writes one, for tests that
// need a process of its own: it does one thing, then ends the way such
// programs end (returning from top-level code). Tests run it with
// `TestSupport.ChildProcess` and an environment of their own (HOME,
// XDG_DATA_HOME), and read what it printed.
//
//   user-program fetch-default URL   a classic completion-handler task on
//                                    a `.default` session (the shared cookie
//                                    jar, kept on disk); prints the body
//   user-program background-download URL
//                                    a download task on a classic background
//                                    session with a download delegate; with
//                                    no agent program to find the program
//                                    serves as its own agent; prints the
//                                    byte count
import Foundation
import URLSessionCompat

let arguments = CommandLine.arguments.dropFirst()
guard let command = arguments.first else {
    FileHandle.standardError.write(Data("usage: user-program fetch-default|background-download URL\n".utf8))
    exit(2)
}

switch command {
case "fetch-default":
    guard let text = arguments.dropFirst().first, let url = URL(string: text) else {
        FileHandle.standardError.write(Data("fetch-default needs a URL\n".utf8))
        exit(2)
    }
    let done = DispatchSemaphore(value: 0)
    URLSession(configuration: .default).dataTask(with: url) { data, _, error in
        if let error { FileHandle.standardError.write(Data("\(error)\n".utf8)) }
        FileHandle.standardOutput.write(data ?? Data())
        done.signal()
    }.resume()
    done.wait()
case "background-download":
    guard let text = arguments.dropFirst().first, let url = URL(string: text) else {
        FileHandle.standardError.write(Data("background-download needs a URL\n".utf8))
        exit(2)
    }
    let delegate = DownloadDelegate()
    URLSession(configuration: .background(withIdentifier: "user-program"), delegate: delegate, delegateQueue: nil)
        .downloadTask(with: url).resume()
    delegate.done.wait()
    if let error = delegate.error {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
    print(delegate.bytes.map(String.init) ?? "no file")
default:
    FileHandle.standardError.write(Data("unknown command \(command)\n".utf8))
    exit(2)
}

/// What a background download's delegate heard (its calls come one at a time).
final class DownloadDelegate: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    let done = DispatchSemaphore(value: 0)
    var bytes: Int?
    var error: (any Error)?

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        bytes = (try? Data(contentsOf: location))?.count
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        self.error = error
        done.signal()
    }
}
