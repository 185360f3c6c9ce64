internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Metrics
import Synchronization

/// What a session's tasks share: the engine session (connection pool), the
/// configuration copy, and the table of live tasks. Tasks hold it strongly,
/// so a session's pool lives as long as the session or any of its tasks.
///
/// Why a lock and not the actor: the table is touched on every task start and
/// completion, from the engine thread; an actor hop per completion would put a
/// task switch on the hot path for nothing.
final class SessionContext: Sendable {
    let engineID: EngineSessionID
    /// Which engine thread each of the session's transfers runs on.
    let placement: TransferPlacement
    let configuration: SessionConfiguration
    /// The configuration's host overrides, Unix socket and local side for
    /// the engine, made once (nil when it sets none: requests carry nothing).
    let connectRoute: ConnectRoute?
    let isShared: Bool
    /// Session-level decision handler, asked after a task's own.
    let delegate: (any SessionTaskDelegate)?
    let credentials = CredentialStore()
    /// TLS-challenge answers (trusted chains, client identities) per host,
    /// so later tasks look for the connections made under them first.
    let tlsChallengeAnswers = TLSChallengeAnswers()
    /// The last credential a handler gave for the session's proxy with a
    /// persistence other than `.none`: later tasks send it to the proxy.
    let proxyAnswer = Mutex<HopCredential?>(nil)
    /// Requests and retries per origin, for retry budgets (`RetryPolicy`).
    let retryLedger = RetryLedger()
    private let table = Mutex(TaskTable())
    /// What answers hops without libcurl: the configuration's transport, or
    /// for a background session the agent (after that transport).
    let localTransport: (any LocalTransport)?
    /// A background session's hold on its identifier at the agent.
    let background: BackgroundLink?

    struct TaskTable: ~Copyable {
        var nextIdentifier = 1
        var live: [Int: TaskCore] = [:]
        /// Open WebSocket and stream connections: the session keeps each until it ends
        /// (as Apple's sessions keep their tasks), and closes its pool after
        /// the last one when invalidated.
        var sockets: [Int: any SessionConnection] = [:]
        var invalidation: Invalidation = .none

        var isIdle: Bool { live.isEmpty && sockets.isEmpty }
    }

    enum Invalidation {
        case none
        /// No new tasks; close the pool when the last live task completes.
        case afterRunningTasks
        case done
    }

    init(configuration: SessionConfiguration, delegate: (any SessionTaskDelegate)?, isShared: Bool) {
        self.configuration = configuration
        connectRoute = configuration.makeConnectRoute()
        if let notice = configuration.http3Choice.notice { configuration.logger?.notice("\(notice)") }
        self.delegate = delegate
        self.isShared = isShared
        if let identifier = configuration.backgroundIdentifier {
            let link = BackgroundLink(identifier: identifier, configuration: configuration)
            background = link
            localTransport = BackgroundTransport(link: link, fallback: configuration.localTransport)
        } else {
            background = nil
            localTransport = configuration.localTransport
        }
        let poolMetrics = PoolMetrics.make(for: configuration)
        poolObserved = Atomic(poolMetrics != nil)
        let options = EngineSessionOptions(
            maximumConnectionsPerHost: max(0, configuration.httpMaximumConnectionsPerHost),
            poolObserver: poolMetrics)
        placement = CurlEngine.shared.makeSession(options: options)
        engineID = placement.session
        CurlEngine.shared.openSession(engineID, options: options)
    }

    deinit {
        CurlEngine.shared.closeSession(engineID)
    }

    /// Whether the pool has its meters (made with the session, or by
    /// `observePool` for a session made before a backend was bootstrapped).
    private let poolObserved: Atomic<Bool>

    /// Gives the pool its meters on `factory` if it has none yet (issue
    /// 58: `Session.shared` or a session made before `MetricsSystem.bootstrap`
    /// gets them at its first task made after it). Connections open by
    /// then are not counted.
    func observePool(with factory: any MetricsFactory) {
        guard !poolObserved.load(ordering: .relaxed),
            poolObserved.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
        else { return }
        CurlEngine.shared.observePool(
            engineID, observer: PoolMetrics(factory: factory, prefix: configuration.metricsPrefix))
    }

    /// A new task identifier, or nil when the session no longer takes tasks.
    func register(_ makeCore: (Int) -> TaskCore) -> TaskCore? {
        table.withLock { table -> TaskCore? in
            guard case .none = table.invalidation else { return nil }
            let identifier = table.nextIdentifier
            table.nextIdentifier += 1
            let core = makeCore(identifier)
            table.live[identifier] = core
            return core
        }
    }

    /// Registers a task under `identifier` (a background task an earlier
    /// program made); later tasks get identifiers above it.
    func register(identifier: Int, _ makeCore: (Int) -> TaskCore) -> TaskCore? {
        table.withLock { table -> TaskCore? in
            guard case .none = table.invalidation, table.live[identifier] == nil else { return nil }
            table.nextIdentifier = max(table.nextIdentifier, identifier + 1)
            let core = makeCore(identifier)
            table.live[identifier] = core
            return core
        }
    }

    func nextRefusedIdentifier() -> Int {
        table.withLock { table in
            defer { table.nextIdentifier += 1 }
            return table.nextIdentifier
        }
    }

    /// A WebSocket or stream connection starts; false when the session was invalidated.
    func registerConnection(_ connection: any SessionConnection) -> Bool {
        table.withLock { table in
            guard case .none = table.invalidation else { return false }
            table.sockets[connection.identifier] = connection
            return true
        }
    }

    func unregisterConnection(_ identifier: Int) {
        let closeNow = table.withLock { table -> Bool in
            guard table.sockets.removeValue(forKey: identifier) != nil else { return false }
            if case .afterRunningTasks = table.invalidation, table.isIdle {
                table.invalidation = .done
                return true
            }
            return false
        }
        if closeNow { CurlEngine.shared.closeSession(engineID) }
    }

    func unregister(_ identifier: Int) {
        background?.release(task: identifier)
        let closeNow = table.withLock { table -> Bool in
            table.live[identifier] = nil
            if case .afterRunningTasks = table.invalidation, table.isIdle {
                table.invalidation = .done
                return true
            }
            return false
        }
        if closeNow { CurlEngine.shared.closeSession(engineID) }
    }

    var liveTasks: [TaskCore] {
        table.withLock { Array($0.live.values) }
    }

    func finishTasksAndInvalidate() {
        guard !isShared else { return }
        let closeNow = table.withLock { table -> Bool in
            guard case .none = table.invalidation else { return false }
            table.invalidation = table.isIdle ? .done : .afterRunningTasks
            return table.isIdle
        }
        if closeNow { CurlEngine.shared.closeSession(engineID) }
    }

    func invalidateAndCancel() {
        guard !isShared else { return }
        let (cores, sockets) = table.withLock { table -> ([TaskCore], [any SessionConnection]) in
            if case .done = table.invalidation { return ([], []) }
            table.invalidation = table.isIdle ? .done : .afterRunningTasks
            return (Array(table.live.values), Array(table.sockets.values))
        }
        for core in cores { core.cancel() }
        for socket in sockets { socket.closeForInvalidation() }
        if cores.isEmpty && sockets.isEmpty { CurlEngine.shared.closeSession(engineID) }
    }
}

/// A connection a session keeps while it is open (WebSocket and stream
/// tasks), as it keeps its tasks.
protocol SessionConnection: AnyObject, Sendable {
    var identifier: Int { get }
    /// `invalidateAndCancel()`: end it now.
    func closeForInvalidation()
}
