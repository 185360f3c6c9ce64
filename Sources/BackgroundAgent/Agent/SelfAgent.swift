import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The program as its own transfer agent: a background session that finds
/// no agent program starts this program again with
/// ASYNCURLSESSION_RUN_AS_AGENT=1 and the agent's arguments, and CAgentBoot's
/// constructor calls this before the program's main (which never runs in
/// that process). Every program that depends on the AsyncURLSession or
/// URLSessionCompat product links it.
@_cdecl("asyncurlsession_run_as_agent")
public func asyncurlsessionRunAsAgent() {
    // The agent's own children (none today) are never agents.
    unsetenv("ASYNCURLSESSION_RUN_AS_AGENT")
    let forever = DispatchSemaphore(value: 0)
    // AgentProgram.main() ends the process (exit) when the agent is done.
    Task.detached { await AgentProgram.main() }
    forever.wait()
    exit(70)
}
