// How many runs each workload gets, for the schedule (`Scheduler`) and for
// the "Runs:" line that announces it, so the two cannot disagree.
import Foundation

struct RunCounts {
    /// --runs (default 3; 1 with --quick).
    let measured: Int
    /// --warmups (default 1; 0 with --quick).
    let warmups: Int
    /// True when --warmups was given: it then applies to every workload.
    let warmupsForced: Bool

    /// The workload's own warm-up count unless --warmups was given.
    func warmups(for workload: Workload) -> Int {
        warmupsForced ? warmups : workload.defaultWarmups ?? warmups
    }

    /// --runs times the workload's multiplier.
    func measured(for workload: Workload) -> Int {
        measured * workload.runMultiplier
    }
}
