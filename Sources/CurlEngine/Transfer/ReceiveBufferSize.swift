/// How much one recv may read for a transfer (CURLOPT_BUFFERSIZE), chosen
/// when the transfer starts from how many others share its I/O thread's
/// session. libcurl 7.88.1 reads a readable socket until it is drained, one
/// recv of at most this size at a time with a poll(0) between them (strace,
/// one 256 MiB GET: 4,105 recvfrom, 3,873 poll, 1,204 epoll_wait), and hands
/// the bytes over in writes of at most 16 KiB.
///
/// - Alone, 64 KiB reads take a quarter of the recv and poll calls per byte
///   and let a read's writes join one chunk for the consumer: one 256 MiB GET
///   through `task.events` took 0.177 s against 0.199 s at 16 KiB (medians
///   of 12 alternating runs).
/// - Beside others, 16 KiB reads won on wall time although they used more
///   CPU: 2,000 GETs of 1 MiB at concurrency 64 took 0.694 s against 0.794 s
///   through `data(for:)`, 0.740 against 0.854 through `task.events`, 0.668
///   against 0.772 through the classic API (medians of 8 alternating runs,
///   64 KiB builds first). The kernel's copy into the buffer is what got
///   cheaper: perf gave its `_copy_to_iter` 885 samples for 4 GB at 16 KiB
///   against 1,582 at 64 KiB (raw libcurl, which reads 16 KiB: 835), likely
///   because a 16 KiB buffer stays in the L1 cache from one read to the next.
///   libcurl also allocates this buffer at every transfer's start and frees
///   it at its end: 64 KiB freed onto the top of a thread's malloc arena
///   pushed it past glibc's trim threshold, about one `madvise(MADV_DONTNEED)`
///   per 12 requests at concurrency 16 (perf trace), each a TLB shootdown
///   and refaulted pages. At 16 KiB, per 20,000 GETs of 1 KiB at
///   concurrency 16, those calls fell 1,689 -> 839 through `data(for:)` and
///   1,102 -> 462 through `task.events`, page faults 8,715 -> 4,219 and
///   3,722 -> 2,212 (`perf stat`), and CPU per request 40.1 -> 38.3 µs and
///   45.3 -> 43.1 µs (medians of 5).
///
/// Only touched pages cost memory either way, so a slow drip stays small.
enum ReceiveBufferSize {
    /// libcurl's READBUFFER_SIZE, what a new or reset handle reads with.
    static let libcurlDefault = 16 * 1024
    static let alone = 64 * 1024
    static let shared = libcurlDefault

    static func `for`(transfersAlreadyRunning: Int) -> Int {
        transfersAlreadyRunning == 0 ? alone : shared
    }
}
