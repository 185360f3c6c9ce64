import AsyncURLSession
import Foundation

extension HARReplay {
    /// What `once(_:configuration:)` set up.
    public enum Cassette: Sendable {
        /// There was no file: the session goes to the network and this
        /// recorder writes the file (`close()` it, or let it go, when done).
        case recording(HARRecorder)
        /// The file was there: the session's requests are answered from it.
        case replaying(HARReplay)

        public var isRecording: Bool {
            if case .recording = self { return true }
            return false
        }
    }

    /// VCR's `once` mode: with no file at `file`, `configuration` records
    /// to it (its `harRecorder`); with one, `configuration` replays it (its
    /// `localTransport`). Delete the file to record again.
    ///
    ///     var configuration = SessionConfiguration.ephemeral
    ///     try HARReplay.once(fixtures.appendingPathComponent("login.har"), configuration: &configuration)
    @discardableResult
    public static func once(
        _ file: URL, configuration: inout SessionConfiguration,
        recording: HARRecorder.Options = HARRecorder.Options(), replaying: Options = Options()
    ) throws -> Cassette {
        if FileManager.default.fileExists(atPath: file.path) {
            let replay = try HARReplay(contentsOf: file, options: replaying)
            configuration.localTransport = replay
            return .replaying(replay)
        }
        let recorder = try HARRecorder(fileURL: file, options: recording)
        configuration.harRecorder = recorder
        return .recording(recorder)
    }
}
