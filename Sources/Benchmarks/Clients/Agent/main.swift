// bench-agent: the main package's background transfer agent, built beside the
// clients so that `asyncurlsession-background` (W8) starts it from there.
import BackgroundAgent

await AgentProgram.main()
