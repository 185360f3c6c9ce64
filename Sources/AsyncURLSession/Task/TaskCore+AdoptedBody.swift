internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A local hop's body that was written to a file elsewhere (the background
/// agent's downloads): a download task takes the file itself, moved into
/// its download folder, instead of its bytes; meanwhile the writer reports
/// how far it got, as download progress.
extension TaskCore {
    enum AdoptedBody {
        /// The file's move is queued in order with its writes: wait for
        /// `flush` before the source may go.
        case adopted(DownloadFile, Wake?, ProgressUpdate?)
        /// The task holds bodies back now (a response decision is pending).
        case pause
        /// Not a download that can take a whole file (a data task, a
        /// response held back, a download continuing resume data): the
        /// bytes must be delivered as a body.
        case notAdoptable
        case abort(URLError)
    }

    /// `LocalTransferDelegate`: the download takes the file, when it can
    /// (`TaskMachine.adoptBody`); its progress is applied and its wake-up
    /// run here, after the lock.
    func adoptLocalBody(_ source: URL, length: Int64, id: HopID) -> LocalBodyAdoption {
        switch guarded.withLock({ $0.adoptBody(source, length: length, id: id) }) {
        case .adopted(let file, let wake, let progress):
            progress?.apply()
            wake?.run(by: self)
            return .adopted(file)
        case .pause: return .pause
        case .notAdoptable: return .notAdoptable
        case .abort(let error): return .abort(error)
        }
    }

    /// How far the body written elsewhere got (`total` of `expected`, -1:
    /// unknown), reported as download progress, throttled as the engine's is.
    func reportDownloadProgress(total: Int64, expected: Int64, id: HopID) {
        let (wake, progress) = guarded.withLock { $0.progressWrittenElsewhere(total: total, expected: expected, id: id) }
        progress?.apply()
        wake?.run(by: self)
    }
}
