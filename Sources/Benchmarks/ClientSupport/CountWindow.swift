// What one client process spends on the requests of its measured part,
// counted: heap allocations, our lock acquisitions, context switches, CPU.
// For `Benchmarks --count` (README: "Allocations and locks per small GET").
//
// - Allocations: ordo-one/malloc-interposer's library, preloaded into the
//   client by the harness (LD_PRELOAD). It is looked up at run time
//   (dlsym), never linked: a client linked to it would have its malloc
//   interposed in every run. Without the preload the counts are nil.
// - Lock acquisitions: the count build's tally (`LockCounting`, compiled
//   only with -DASYNCURLSESSION_COUNTING_LOCKS), passed in by the clients
//   on our library; nil for the others and in ordinary builds.
// - Context switches and CPU: getrusage(RUSAGE_SELF), every thread of the
//   process.
#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The counts of one measured part, in all (the harness divides by `requests`).
public struct CountedWork: Codable, Sendable {
    public var requests = 0
    /// malloc, calloc, realloc (one each), posix_memalign, aligned_alloc,
    /// memalign and valloc calls; nil when the interposer was not loaded.
    public var allocations: Int?
    /// Bytes those calls asked for.
    public var allocatedBytes: Int?
    public var frees: Int?
    /// Acquisitions of our locks; nil when not counted.
    public var lockAcquisitions: Int?
    public var voluntarySwitches = 0
    public var involuntarySwitches = 0
    /// User + system CPU of the whole process.
    public var cpuSeconds = 0.0
    /// Threads of the process at the end.
    public var threads = 0

    enum CodingKeys: String, CodingKey {
        case requests, allocations, frees, threads
        case allocatedBytes = "allocated_bytes"
        case lockAcquisitions = "lock_acquisitions"
        case voluntarySwitches = "voluntary_switches"
        case involuntarySwitches = "involuntary_switches"
        case cpuSeconds = "cpu_s"
    }
}

/// One measured part: `begin` before its first request, `end` after its last.
public struct CountWindow: Sendable {
    private let usage: rusage
    private let locksBefore: Int?
    private let lockAcquisitions: (@Sendable () -> Int)?
    private let countsAllocations: Bool

    /// Starts counting: clears and enables the interposer's counters (when it
    /// is loaded), notes the lock count and the process's rusage.
    public static func begin(lockAcquisitions: (@Sendable () -> Int)?) -> CountWindow {
        let interposer = MallocInterposer.shared
        if let interposer {
            interposer.reset()
            interposer.enable()
        }
        return CountWindow(
            usage: Self.processUsage(), locksBefore: lockAcquisitions?(), lockAcquisitions: lockAcquisitions,
            countsAllocations: interposer != nil)
    }

    /// Stops counting and returns what `requests` requests cost.
    public func end(requests: Int) -> CountedWork {
        var counted = CountedWork()
        counted.requests = requests
        if countsAllocations, let interposer = MallocInterposer.shared {
            interposer.disable()
            let stats = interposer.statistics()
            counted.allocations = stats.allocations
            counted.allocatedBytes = stats.bytes
            counted.frees = stats.frees
        }
        let usage = Self.processUsage()
        if let locksBefore, let lockAcquisitions {
            counted.lockAcquisitions = lockAcquisitions() - locksBefore
        }
        counted.voluntarySwitches = usage.ru_nvcsw - self.usage.ru_nvcsw
        counted.involuntarySwitches = usage.ru_nivcsw - self.usage.ru_nivcsw
        counted.cpuSeconds = Self.cpuSeconds(usage) - Self.cpuSeconds(self.usage)
        counted.threads = ProcessLimits.statusField("Threads:")
        return counted
    }

    private static func processUsage() -> rusage {
        var usage = rusage()
        _ = getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return usage
    }

    private static func cpuSeconds(_ usage: rusage) -> Double {
        Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }
}

extension CountWindow {
    /// `run(n, base)` makes n requests and returns `base` with their counts.
    /// Without `--count-warmup`, the measured requests only. With it, the
    /// warm-up requests first (reported only if they fail), then the
    /// measured ones inside a window.
    static func measure(
        arguments: ClientArguments, filling base: ClientResult, lockAcquisitions: (@Sendable () -> Int)?,
        run: (_ count: Int, _ base: ClientResult) async -> ClientResult
    ) async -> ClientResult {
        guard arguments.countWarmup > 0 else { return await run(arguments.count, base) }
        let warmup = await run(arguments.countWarmup, base)
        let window = begin(lockAcquisitions: lockAcquisitions)
        var result = await run(arguments.count, base)
        result.counts = window.end(requests: result.requests)
        if warmup.errors > 0 {
            result.errors += warmup.errors
            result.firstError = result.firstError ?? warmup.firstError.map { "warm-up: " + $0 }
        }
        return result
    }
}

/// The C API of malloc-interposer's preloaded library (its `interposer.h`),
/// found with dlsym; nil when the library is not in the process.
struct MallocInterposer: Sendable {
    typealias Toggle = @convention(c) () -> Void
    typealias Stats = @convention(c) (
        UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Int64>?,
        UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Int64>?
    ) -> Void

    let reset: Toggle
    let enable: Toggle
    let disable: Toggle
    private let stats: Stats

    static let shared: MallocInterposer? = {
        guard let program = dlopen(nil, RTLD_NOW) else { return nil }
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            dlsym(program, name).map { unsafeBitCast($0, to: type) }
        }
        guard let reset = symbol("malloc_interposer_reset", as: Toggle.self),
              let enable = symbol("malloc_interposer_enable", as: Toggle.self),
              let disable = symbol("malloc_interposer_disable", as: Toggle.self),
              let stats = symbol("malloc_interposer_get_stats", as: Stats.self)
        else { return nil }
        return MallocInterposer(reset: reset, enable: enable, disable: disable, stats: stats)
    }()

    func statistics() -> (allocations: Int, bytes: Int, frees: Int) {
        var count: Int64 = 0, bytes: Int64 = 0, small: Int64 = 0, large: Int64 = 0, frees: Int64 = 0, freed: Int64 = 0
        stats(&count, &bytes, &small, &large, &frees, &freed)
        // The library's mallocCount is small + large (its README).
        return (Int(small + large), Int(bytes), Int(frees))
    }
}
