internal import AgentWire
import Foundation

/// Where a background session finds the transfer agent: its folder (per
/// user, `$XDG_RUNTIME_DIR/AsyncURLSession`) and the program to start
/// when none runs.
enum AgentLocation {
    static func folder(_ configuration: SessionConfiguration) -> AgentFolder {
        configuration.backgroundAgentFolder.map { AgentFolder(url: $0) } ?? AgentFolder.forCurrentUser()
    }

    /// `backgroundAgentPath`, else `ASYNCURLSESSION_AGENT`, else
    /// `asyncurlsession-agent` beside this program (where SwiftPM builds
    /// it), else on the PATH.
    static func executable(_ configuration: SessionConfiguration) -> String? {
        if let path = configuration.backgroundAgentPath { return path }
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["ASYNCURLSESSION_AGENT"], !path.isEmpty { return path }
        let name = "asyncurlsession-agent"
        if let program = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let beside = URL(fileURLWithPath: program).deletingLastPathComponent().appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        }
        for folder in (environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
