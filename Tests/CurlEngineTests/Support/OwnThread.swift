import Foundation

/// Runs `body` on a thread of its own and waits for it without holding a
/// thread of the cooperative pool.
///
/// Why: these tests block as a parked caller does (waiting for transfers,
/// for up to seconds against slow servers), and a 2-core machine's pool has
/// two threads: run on them, they starved every other test of the suite
/// (a probe sleeping 10 ms overshot by 2 to 4 s), whose timeouts then fired
/// late. An issue recorded on this thread names its file and line, but not
/// its test (Swift Testing's current test is a task-local).
func onOwnThread(_ body: @escaping @Sendable () throws -> Void) async throws {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 1 << 20
        thread.start()
    }
}
