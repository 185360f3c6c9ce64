internal import AgentWire
internal import CAgentBoot
import Foundation

/// Where a background session finds the transfer agent: its folder (per
/// user, `$XDG_RUNTIME_DIR/AsyncURLSession`) and the program to start
/// when none runs.
enum AgentLocation {
    /// The program to start when no agent runs, and what to set in its
    /// environment: `executable(_:)`, else this program itself as the agent
    /// (it links BackgroundAgent, as every program on the AsyncURLSession or
    /// URLSessionCompat product does: CAgentBoot runs the agent before its
    /// main); nil: none.
    static func program(_ configuration: SessionConfiguration) -> (path: String, environment: [String: String])? {
        if let path = executable(configuration) { return (path, [:]) }
        if asyncurlsession_self_agent_available() != 0 {
            return ("/proc/self/exe", ["ASYNCURLSESSION_RUN_AS_AGENT": "1"])
        }
        return nil
    }

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
