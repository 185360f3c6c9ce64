internal import CCurl
import Foundation

/// One engine thread: its own loop, epoll set, command queue and multi
/// handles (one per session that may use it).
///
/// Why several: one thread serving every transfer was the ceiling. At 64
/// small requests in flight it ran at a full core while the other core of a
/// 2-core machine sat half idle, so throughput was bound by one thread's work
/// per request. Transfers are placed on a shard when they are made and stay
/// there, so every command about one transfer reaches the same thread, in
/// order; a transfer never moves between multi handles.
final class EngineShard: Sendable {
    let index: Int
    let commands = CommandQueue()

    init(index: Int) {
        self.index = index
    }

    /// Starts the thread; it runs for the life of the process.
    func startThread(executor: EngineExecutor) {
        let thread = Thread { [self] in
            // The OS-level name (corelibs' Thread.name does not set it here)
            // shows in top -H, perf and gdb; tests use it to tell an I/O thread.
            ccurl_name_current_thread("AsyncURLSession")
            let loop = EngineLoop(shard: self, executor: executor)
            loop.run()
        }
        thread.name = "AsyncURLSession.CurlEngine.\(index)"
        thread.stackSize = 1 << 20
        thread.start()
    }
}
