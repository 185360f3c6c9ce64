// The count build's tally of our library's lock acquisitions, for the
// clients on it (`Benchmarks --count`). The tally exists only when the main
// package is built with -DASYNCURLSESSION_COUNTING_LOCKS (the flag reaches
// every module of the build, this one too); otherwise there is nothing to
// read and the clients report no lock count.
#if ASYNCURLSESSION_COUNTING_LOCKS
@_spi(Benchmarks) import AsyncURLSession
#endif

public enum OurLocks {
    /// Reads the process's lock acquisitions so far; nil when not counted.
    #if ASYNCURLSESSION_COUNTING_LOCKS
    public static let acquisitions: (@Sendable () -> Int)? = { LockCounting.acquisitions }
    #else
    public static let acquisitions: (@Sendable () -> Int)? = nil
    #endif
}
