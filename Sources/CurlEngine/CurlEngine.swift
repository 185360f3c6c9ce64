// CurlEngine: the libcurl boundary. The only module that imports CCurl.
//
// Threading: one dedicated engine thread owns every libcurl handle (easy, multi,
// share). Nothing else calls libcurl. Other threads talk to it through
// `CurlEngine.submit(_:)`, which appends to a lock-protected command queue and
// wakes the loop through an eventfd (one write per batch, not per command).
//
// Ownership: a session of the core opens one `EngineSession` = one multi handle =
// one connection pool. Transfers live in that session's table on the engine
// thread; libcurl's PRIVATE/WRITEDATA pointers are unretained references whose
// lifetime that table guarantees.
//
// Errors: every failure reaches the transfer's delegate exactly once, as a
// `URLError`, through `TransferDelegate.transferDidComplete(_:)`. Delegates are
// called on the engine thread and must not block or call user code.
internal import CCurl
import Foundation
import Synchronization

/// Identifies one engine session (one multi handle, one connection pool).
package struct EngineSessionID: Hashable, Sendable {
    package let rawValue: UInt64
}

/// Identifies one transfer (one request/response exchange on one easy handle).
package struct TransferID: Hashable, Sendable {
    package let rawValue: UInt64
}

/// Options that apply to a whole engine session (its multi handle).
package struct EngineSessionOptions: Sendable {
    /// `CURLMOPT_MAX_HOST_CONNECTIONS`; 0 means unlimited.
    package var maximumConnectionsPerHost: Int
    package init(maximumConnectionsPerHost: Int) {
        self.maximumConnectionsPerHost = maximumConnectionsPerHost
    }
}

package final class CurlEngine: Sendable {
    /// The process-wide engine. libcurl's global state is initialised once, here.
    package static let shared = CurlEngine()

    private let commands: CommandQueue
    /// Runs Swift jobs on the engine thread (see `EngineExecutor`).
    package let executor: EngineExecutor
    private let nextIdentifier = Atomic<UInt64>(1)

    private init() {
        // curl_global_init is thread-safe in this build (CURL_VERSION_THREADSAFE),
        // but it must run before any other libcurl call: `shared` is lazily and
        // atomically initialised, which orders it before the engine thread starts.
        curl_global_init(Int(CURL_GLOBAL_ALL))
        ccurl_ignore_sigpipe_if_default()
        commands = CommandQueue()
        executor = EngineExecutor(commands: commands)
        let queue = commands
        let executor = self.executor
        let thread = Thread {
            // The OS-level name (corelibs' Thread.name does not set it here)
            // shows in top -H, perf and gdb; tests use it to tell the I/O thread.
            ccurl_name_current_thread("AsyncURLSession")
            let loop = EngineLoop(commands: queue, executor: executor)
            loop.run()
        }
        thread.name = "AsyncURLSession.CurlEngine"
        thread.stackSize = 1 << 20
        thread.start()
    }

    package func makeSessionID() -> EngineSessionID {
        EngineSessionID(rawValue: nextIdentifier.wrappingAdd(1, ordering: .relaxed).oldValue)
    }

    package func makeTransferID() -> TransferID {
        TransferID(rawValue: nextIdentifier.wrappingAdd(1, ordering: .relaxed).oldValue)
    }

    package func openSession(_ id: EngineSessionID, options: EngineSessionOptions) {
        commands.enqueue(.openSession(id, options))
    }

    /// Cancels the session's transfers and frees its handles.
    package func closeSession(_ id: EngineSessionID) {
        commands.enqueue(.closeSession(id))
    }

    /// Starts a transfer. The delegate hears about it exactly once at the end.
    package func start(
        _ id: TransferID,
        in session: EngineSessionID,
        request: TransferRequest,
        delegate: any TransferDelegate
    ) {
        commands.enqueue(.start(id, session, request, delegate))
    }

    /// Suspends a transfer (both directions), as `URLSessionTask.suspend()`.
    package func suspend(_ id: TransferID, in session: EngineSessionID) {
        commands.enqueue(.suspend(id, session))
    }

    /// Undoes `suspend`.
    package func resume(_ id: TransferID, in session: EngineSessionID) {
        commands.enqueue(.resume(id, session))
    }

    /// The consumer has drained its buffer: deliver the body again.
    package func resumeReceiving(_ id: TransferID, in session: EngineSessionID) {
        commands.enqueue(.resumeReceiving(id, session))
    }

    /// A body stream's producer wrote bytes: send again.
    package func resumeSending(_ id: TransferID, in session: EngineSessionID) {
        commands.enqueue(.resumeSending(id, session))
    }

    /// Cancels a transfer. Its delegate is told `URLError(.cancelled)` unless the
    /// transfer already finished.
    package func cancel(_ id: TransferID, in session: EngineSessionID, error: URLError) {
        commands.enqueue(.cancel(id, session, error))
    }

    /// libcurl's version string, e.g. "libcurl/7.88.1 OpenSSL/3.0.x ...".
    package static var libcurlVersion: String {
        String(cString: curl_version())
    }
}
