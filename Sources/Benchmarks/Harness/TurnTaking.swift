// How the harness runs its clients, for the workloads (`Scheduler`) and the
// counts (`CountRun`) alike: round after round, the clients taking turns in
// each (A B C A B C ...), so drift on the machine spreads evenly over them.
import Foundation

struct TurnTaking {
    let runner: ClientRunner
    /// In table order; the ones not built never take a turn.
    let clients: [ClientSpec]
    /// Progress lines (stderr, so stdout keeps only the report).
    let log: (String) -> Void

    /// `rounds` rounds of turns. `turn` runs one client in one round (from
    /// 0) and says whether the client goes on: one that cannot (unsupported,
    /// failing) sits out the rounds after.
    func take(rounds: Int, _ turn: (_ client: ClientSpec, _ round: Int) -> Bool) {
        let built = clients.filter { runner.isBuilt($0) }
        var sittingOut: Set<String> = []
        for round in 0..<rounds {
            for client in built where !sittingOut.contains(client.name) {
                if !turn(client, round) { sittingOut.insert(client.name) }
            }
        }
    }
}
