struct LoopbackDemo { func run() async throws { } }
