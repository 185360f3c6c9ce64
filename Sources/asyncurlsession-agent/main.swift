// asyncurlsession-agent: the background transfer agent, one per user.
//
//   asyncurlsession-agent [--folder DIR] [--idle-exit SECONDS] [--retention SECONDS]
//
// See `AgentProgram` for what it does and how to stop it.
import BackgroundAgent

await AgentProgram.main()
