import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Records a session's traffic as a HAR 1.2 file (an HTTP Archive, which
/// browsers' developer tools, proxies and `HARReplay` read): set it as
/// `SessionConfiguration.harRecorder`.
///
///     var configuration = SessionConfiguration.ephemeral
///     configuration.harRecorder = try HARRecorder(fileURL: URL(fileURLWithPath: "session.har"))
///
/// - **Entries**: one per hop (each redirect, each retry, each answer of
///   the response cache is an entry of its own), written when its task
///   ends, in the order tasks end. Each has the request as sent (the
///   session's headers included; its body with `recordsRequestBodies`),
///   the response's status, headers and body (decoded, as the task got it;
///   text as text, other bytes as base64, cut at `maximumBodySize`), the
///   hop's timings from the task's metrics, the server's address and the
///   connection's local port.
/// - **Secrets**: redacted by default, as the log redacts them: the values
///   of Authorization, Proxy-Authorization, Cookie, Set-Cookie, the
///   configuration's `sensitiveHeaderNames` and `redactedHeaderNames`
///   become `<redacted>`, and so do URL passwords. `redactsSecrets = false`
///   keeps them (a file for your eyes only).
/// - **On disk at once**: the file is valid HAR after every entry (each is
///   written over the closing `]}}`, which follows it again), and written
///   when its task ends, before the task's consumer hears of the end. So a
///   program that ends, or is killed, leaves every finished task in the
///   file; nothing waits for `close()`.
/// - **Memory**: none grows with the file. With `maximumFileSize`, a file
///   that would grow past it is renamed with a `.1` before its extension
///   (replacing the one there) and a new file begins.
/// - **Cost**: a session without a recorder pays nothing but nil checks.
///   With one, each task keeps its hops' headers and bodies (up to the
///   limit) until it ends, then its entries are built and written on the
///   thread that ends it.
///
/// One file per recorder: the file is made (replaced) when the recorder is.
/// Sessions may share a recorder; their entries interleave by task end.
public final class HARRecorder: Sendable {
    public struct Options: Sendable {
        /// Bytes of each body kept (request and response); the rest is
        /// counted, not kept. 1 MiB by default.
        public var maximumBodySize: Int
        /// Whether request bodies given as data (`httpBody`, an upload from
        /// data) go in as `postData`. Off by default: bodies often carry
        /// secrets no header name reveals.
        public var recordsRequestBodies: Bool
        /// Whether secrets are redacted (see `HARRecorder`). On by default;
        /// turning it off is the one way to keep them.
        public var redactsSecrets: Bool
        /// More header names (any case) whose values are redacted.
        public var redactedHeaderNames: Set<String>
        /// Bytes a file may reach before it is rotated; nil: no limit.
        public var maximumFileSize: Int?

        public init(
            maximumBodySize: Int = 1 << 20, recordsRequestBodies: Bool = false, redactsSecrets: Bool = true,
            redactedHeaderNames: Set<String> = [], maximumFileSize: Int? = nil
        ) {
            self.maximumBodySize = max(0, maximumBodySize)
            self.recordsRequestBodies = recordsRequestBodies
            self.redactsSecrets = redactsSecrets
            self.redactedHeaderNames = redactedHeaderNames
            self.maximumFileSize = maximumFileSize
        }
    }

    public let fileURL: URL
    public let options: Options
    /// nil once closed.
    private let writer: Mutex<HARFileWriter?>
    private let failures = Mutex<[String]>([])

    /// Makes (or replaces) the file at `fileURL`, a valid HAR with no entry.
    public init(fileURL: URL, options: Options = Options()) throws {
        self.fileURL = fileURL
        self.options = options
        writer = Mutex(try HARFileWriter(url: fileURL))
    }

    deinit {
        close()
    }

    /// Stops recording; later entries are dropped. The file is complete
    /// already (see `HARRecorder`): closing only lets the file handle go.
    public func close() {
        writer.withLock { writer in
            writer.take()?.close()
        }
    }

    /// Entries in the current file.
    public var entryCount: Int {
        writer.withLock { $0?.entryCount ?? 0 }
    }

    /// Why writes failed, if any did (a full disk, a removed directory):
    /// such entries are lost, and the task never fails for it.
    public var writeFailures: [String] {
        failures.withLock { $0 }
    }

    /// The file a rotated file is renamed to: `name.1.har` for `name.har`.
    public var rotatedFileURL: URL {
        let ext = fileURL.pathExtension
        let base = fileURL.deletingPathExtension()
        return ext.isEmpty ? base.appendingPathExtension("1") : base.appendingPathExtension("1").appendingPathExtension(ext)
    }

    /// A task's entries, in order (encoded here, written under the lock).
    func append(_ entries: [HAR.Entry]) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var encoded: [Data] = []
        encoded.reserveCapacity(entries.count)
        do {
            for entry in entries { encoded.append(try encoder.encode(entry)) }
        } catch {
            failures.withLock { $0.append("encoding an entry: \(error)") }
            return
        }
        let failure: String? = writer.withLock { writer in
            do {
                for entry in encoded {
                    guard let current = writer else { return nil }
                    if let limit = options.maximumFileSize, current.entryCount > 0,
                        current.size(adding: entry) > UInt64(limit)
                    {
                        try rotate(&writer)
                    }
                    try writer?.append(entry)
                }
                return nil
            } catch {
                return "writing \(fileURL.path): \(error)"
            }
        }
        if let failure { failures.withLock { $0.append(failure) } }
    }

    /// The full file becomes `rotatedFileURL`; a new one starts.
    private func rotate(_ writer: inout HARFileWriter?) throws {
        writer.take()?.close()
        let rotated = rotatedFileURL
        try? FileManager.default.removeItem(at: rotated)
        try FileManager.default.moveItem(at: fileURL, to: rotated)
        writer = try HARFileWriter(url: fileURL)
    }
}
