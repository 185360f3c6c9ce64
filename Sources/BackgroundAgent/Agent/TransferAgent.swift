import AgentWire
import AsyncURLSession
import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The agent's brain: takes requests from programs, records them in the
/// journal, runs them, and on start takes up what the journal says was
/// still live (after a crash or a kill, from the bytes on disk).
package actor TransferAgent {
    private let journal: AgentJournal
    private let runner: DownloadRunner
    private let logger: Logger
    private var running: [Int64: Task<Void, Never>] = [:]
    /// Which running transfers are discretionary.
    private var runningDiscretionary: Set<Int64> = []
    /// Discretionary transfers waiting for the others to end, oldest first.
    private var deferred: [Int64] = []
    /// The program holding each session (`attach`), told of its transfers' changes.
    private var subscribers: [String: SessionSubscriber] = [:]
    /// Where finished and partial files are.
    private let files: URL
    /// When the last transfer ended (or the agent started).
    private var idleSince = Date()

    /// The agent for `folder` (an `AgentFolder` already prepared): its
    /// journal there, its files in `transfers/` beside it.
    package init(folder: URL, retryPolicy: RetrySchedule.Policy = .background(), logger: Logger) throws(JournalError) {
        let files = folder.appendingPathComponent("transfers")
        if mkdir(files.path, 0o700) != 0, errno != EEXIST {
            throw JournalError("cannot create \(files.path): \(String(cString: strerror(errno)))")
        }
        self.files = files
        journal = try AgentJournal(at: folder.appendingPathComponent("journal.sqlite"))
        var configuration = SessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 60
        configuration.logger = nil
        runner = DownloadRunner(
            journal: journal, folder: files, session: Session(configuration: configuration), retryPolicy: retryPolicy)
        self.logger = logger
    }

    /// Starts every transfer the journal holds as live.
    package func resumeLiveTransfers() async {
        do {
            for entry in try await journal.entries() where entry.phase.isLive {
                logger.info("resuming transfer \(entry.id) (\(entry.request.url)) from \(entry.bytesOnDisk) bytes")
                launch(entry.id, discretionary: entry.request.isDiscretionary)
            }
        } catch {
            logger.error("cannot read the journal: \(error.description)")
        }
    }

    /// Seconds since the agent last had a transfer running; 0 while one runs.
    package var idleSeconds: Double { running.isEmpty && deferred.isEmpty ? Date().timeIntervalSince(idleSince) : 0 }

    package func handle(_ request: AgentRequest) async -> AgentReply {
        switch request {
        case .startDownload(let session, let task, let request, let destination):
            guard let url = URL(string: request.url), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https"
            else {
                return .refused("background transfers are http and https only; '\(request.url)' is neither")
            }
            if let body = request.bodyFile, access(body, R_OK) != 0 {
                return .refused("the upload's body file \(body) cannot be read: \(String(cString: strerror(errno)))")
            }
            let kind: JournalEntry.Kind = request.bodyFile == nil ? .download : .upload
            do {
                let entry = try await journal.add(
                    session: session, task: task, kind: kind, request: request, destination: destination)
                logger.info("transfer \(entry.id): \(kind.rawValue) of \(request.url) for session \(session)")
                launch(entry.id, discretionary: request.isDiscretionary)
                return .started(id: entry.id)
            } catch {
                return .refused(error.description)
            }
        case .status:
            do {
                let transfers = try await journal.entries().map(Self.status)
                return .status(agentProcess: getpid(), transfers: transfers)
            } catch {
                return .refused(error.description)
            }
        case .attach:
            return .refused("attach needs a connection of its own (AgentServer)")
        case .cancel(let id):
            return await cancel(id)
        case .delivered(let id):
            return await delivered(id)
        }
    }

    /// `subscriber`'s program holds its session from now on, unless another
    /// does: the reply lists the session's transfers its program has not
    /// taken the end of.
    package func attach(_ subscriber: SessionSubscriber) async -> AgentReply {
        if let holder = subscribers[subscriber.session], holder !== subscriber {
            return .sessionInUse(byProcess: holder.process)
        }
        do {
            let transfers = try await journal.entries(session: subscriber.session).filter { $0.phase != .delivered }
            subscribers[subscriber.session] = subscriber
            logger.info("process \(subscriber.process) holds session \(subscriber.session)")
            return .attached(transfers: transfers.map(Self.status))
        } catch {
            return .refused(error.description)
        }
    }

    /// The connection of `subscriber` closed: its session is free again.
    package func detach(_ subscriber: SessionSubscriber) {
        if subscribers[subscriber.session] === subscriber {
            subscribers[subscriber.session] = nil
            logger.info("session \(subscriber.session) released by process \(subscriber.process)")
        }
    }

    /// Tells the program holding `id`'s session how it is now: as the
    /// journal says, with the bytes received so far while it runs (the
    /// journal records them durably, and so more seldom).
    private func notify(_ id: Int64, after event: DownloadRunner.Event? = nil) async {
        guard !subscribers.isEmpty, let entry = try? await journal.entry(id: id),
            let subscriber = subscribers[entry.session]
        else { return }
        var status = Self.status(entry)
        // Only while running: these notices run in no set order, and an
        // ended transfer's figures are the journal's.
        if case .progress(let received, let expected)? = event, entry.phase == .running {
            status.bytesOnDisk = max(received, entry.bytesOnDisk)
            status.expectedBytes = expected
        }
        // Bytes sent only grow at the program's end, so an ended
        // transfer's status may carry them too (its last report may come
        // after the end's: a fast upload's only one does).
        if case .sent(let sent, let expected)? = event {
            status.bytesSent = sent
            status.expectedBytesToSend = expected
        }
        subscriber.post(status)
    }

    private func cancel(_ id: Int64) async -> AgentReply {
        running.removeValue(forKey: id)?.cancel()
        runningDiscretionary.remove(id)
        deferred.removeAll { $0 == id }
        launchDeferredIfAlone()
        if running.isEmpty { idleSince = Date() }
        do {
            guard let entry = try await journal.entry(id: id) else { return .refused("no transfer \(id)") }
            if entry.phase.isLive { try await journal.move(id, to: .cancelled) }
            removeFiles(of: id)
            logger.info("transfer \(id) cancelled by its program")
            // Its program asked, so it knows: nothing is kept.
            try await journal.remove(id)
            return .done
        } catch {
            return .refused(error.description)
        }
    }

    private func delivered(_ id: Int64) async -> AgentReply {
        do {
            guard try await journal.entry(id: id) != nil else { return .refused("no transfer \(id)") }
            // Its program has the end: nothing is kept (and the task
            // identifier is free for that session's next program).
            removeFiles(of: id)
            try await journal.remove(id)
            return .done
        } catch {
            return .refused(error.description)
        }
    }

    /// Discretionary transfers start once only discretionary ones run.
    private func launchDeferredIfAlone() {
        guard running.count == runningDiscretionary.count else { return }
        let waiting = deferred
        deferred = []
        for id in waiting { launch(id, discretionary: true) }
    }

    /// Forgets transfers that ended more than `retention` seconds ago and
    /// were never taken by a program (nobody reconnected), with their files
    /// in the agent's folder: what `--retention` promises. A file already
    /// moved to a `fetch --background` destination is the user's and stays.
    /// Returns how many were forgotten.
    @discardableResult
    package func sweep(retention: Double, now: Date = Date()) async -> Int {
        do {
            let stale = try await journal.ended(before: now.addingTimeInterval(-retention))
            for entry in stale {
                removeFiles(of: entry.id)
                try await journal.remove(entry.id)
                logger.info("transfer \(entry.id) (\(entry.phase.rawValue)) forgotten after \(Int(retention)) s unclaimed")
            }
            return stale.count
        } catch {
            logger.error("cannot sweep the journal: \(error.description)")
            return 0
        }
    }

    /// What is left of a transfer's files once its program has its end.
    private func removeFiles(of id: Int64) {
        unlink(files.appendingPathComponent("\(id).partial").path)
        unlink(files.appendingPathComponent("\(id).download").path)
    }

    static func status(_ entry: JournalEntry) -> BackgroundTransferStatus {
        BackgroundTransferStatus(
            id: entry.id, session: entry.session, task: entry.task, url: entry.request.url,
            phase: entry.phase.rawValue, bytesOnDisk: entry.bytesOnDisk, expectedBytes: entry.expectedBytes,
            file: entry.destination ?? entry.resultFile, failure: entry.failure, failureCode: entry.failureCode,
            head: entry.responseHead, request: entry.request)
    }

    /// Starts transfer `id`; a discretionary one waits while any other
    /// transfer runs (its priority is lower: it takes the network only
    /// when nothing else wants it), and starts when the last one ends.
    private func launch(_ id: Int64, discretionary: Bool) {
        guard running[id] == nil else { return }
        if discretionary {
            guard running.count == runningDiscretionary.count else {
                if !deferred.contains(id) { deferred.append(id) }
                logger.info("transfer \(id) is discretionary: it waits for the others to end")
                return
            }
            runningDiscretionary.insert(id)
        }
        let runner = runner
        let logger = logger
        running[id] = Task {
            let entry: JournalEntry?
            do {
                entry = try await runner.run(id) { event in
                    if case .retrying(let code, let pause) = event {
                        logger.notice("transfer \(id): network error \(code.rawValue), retrying in \(pause) s")
                    }
                    Task { await self.notify(id, after: event) }
                }
            } catch {
                logger.error("transfer \(id): \(error)")
                entry = nil
            }
            await self.ended(id, entry)
        }
    }

    private func ended(_ id: Int64, _ entry: JournalEntry?) async {
        // A cancel already took it off the list (and told its program).
        guard running.removeValue(forKey: id) != nil else { return }
        runningDiscretionary.remove(id)
        launchDeferredIfAlone()
        if running.isEmpty { idleSince = Date() }
        guard let entry else { return }
        switch entry.phase {
        case .finished:
            logger.info("transfer \(id) finished: \(entry.bytesOnDisk) bytes")
            if let destination = entry.destination, let file = entry.resultFile { await deliver(entry, file, to: destination) }
        case .failed:
            logger.warning("transfer \(id) failed: \(entry.failure ?? "unknown")")
        default:
            break
        }
        await notify(id)
    }

    /// Moves a finished file to where its program asked, then marks it
    /// delivered; a failed move leaves it finished, the reason logged.
    private func deliver(_ entry: JournalEntry, _ file: String, to destination: String) async {
        if rename(file, destination) != 0 {
            let reason = String(cString: strerror(errno))
            // Another file system: copy, then remove ours.
            do {
                if FileManager.default.fileExists(atPath: destination) { try FileManager.default.removeItem(atPath: destination) }
                try FileManager.default.copyItem(atPath: file, toPath: destination)
                try FileManager.default.removeItem(atPath: file)
            } catch {
                logger.error("transfer \(entry.id): cannot move the file to \(destination): \(reason); \(error)")
                return
            }
        }
        do { try await journal.move(entry.id, to: .delivered, resultFile: destination) } catch {
            logger.error("transfer \(entry.id): \(error.description)")
        }
    }
}
