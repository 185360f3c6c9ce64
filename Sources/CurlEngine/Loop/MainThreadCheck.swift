import Foundation
import Glibc

/// Whether the calling thread is the process's main thread, asked of
/// Foundation once per thread and then remembered in a thread-specific value.
///
/// Why: on Linux, Foundation's `Thread.isMainThread` asks the kernel every
/// time (getpid and gettid, two system calls), and `CurlEngine.waitInline`
/// asks before a consumer parks, once per request one request at a time:
/// 0.96 getpid and 0.97 gettid calls per 1 KiB GET through `data(for:)`
/// (perf stat, 10,000 GETs one at a time). A thread's answer never changes,
/// and a thread-specific value dies with its thread, so a recycled thread id
/// starts unknown again.
enum MainThreadCheck {
    private static let key = ThreadSpecificKey.make()

    /// Stored as the thread-specific value's bit pattern (no memory behind
    /// it); 0, no value, means not asked yet on this thread.
    private static let mainTag: UInt = 1
    private static let otherTag: UInt = 2

    static var isMainThread: Bool { isMainThread(asking: { Thread.isMainThread }) }

    /// The calling thread's remembered answer, or `ask()`'s, remembered.
    static func isMainThread(asking ask: () -> Bool) -> Bool {
        let known = UInt(bitPattern: pthread_getspecific(key))
        if known != 0 { return known == mainTag }
        let isMain = ask()
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: isMain ? mainTag : otherTag))
        return isMain
    }
}
