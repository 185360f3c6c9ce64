import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The events that wait for an answer, asked of the classic delegate methods.
extension TaskDriver {
    func redirect(_ decision: RedirectDecision, on current: URLSessionTask) async {
        let session = session
        let reply: Reply<URLRequest?> = await ask(
            URLSessionTaskDelegate.self, of: candidates(for: current), on: current, asyncForm: .redirect
        ) { delegate, answer in
            delegate.urlSession(
                session, task: current, willPerformHTTPRedirection: decision.response,
                newRequest: decision.proposedRequest, completionHandler: answer)
        } orAsync: { delegate in
            await delegate.urlSession(
                session, task: current, willPerformHTTPRedirection: decision.response,
                newRequest: decision.proposedRequest)
        }
        switch reply {
        case .answered(let request?): decision.follow(request)
        case .answered(nil): decision.stop()
        // Not implemented: the core's policy (follow, but not https to http).
        case .notImplemented, .abandoned: break
        }
    }

    func challenge(_ decision: ChallengeDecision, on current: URLSessionTask) async {
        let session = session
        let challenge = ChallengeBridge.challenge(for: decision)
        typealias Answer = ChallengeAnswer
        // Connection-level methods go to the session-level method first.
        if decision.isConnectionLevel, let sessionDelegate = session.delegate {
            let reply: Reply<Answer> = await ask(
                URLSessionDelegate.self, of: [sessionDelegate], on: current, asyncForm: .sessionChallenge
            ) { delegate, answer in
                delegate.urlSession(session, didReceive: challenge) { answer(Answer($0, $1)) }
            } orAsync: { delegate in
                let (disposition, credential) = await delegate.urlSession(session, didReceive: challenge)
                return Answer(disposition, credential)
            }
            switch reply {
            case .answered(let answer): return apply(answer, to: decision)
            case .abandoned: return
            case .notImplemented: break
            }
        }
        let reply: Reply<Answer> = await ask(
            URLSessionTaskDelegate.self, of: candidates(for: current), on: current, asyncForm: .taskChallenge
        ) { delegate, answer in
            delegate.urlSession(session, task: current, didReceive: challenge) { answer(Answer($0, $1)) }
        } orAsync: { delegate in
            let (disposition, credential) = await delegate.urlSession(session, task: current, didReceive: challenge)
            return Answer(disposition, credential)
        }
        switch reply {
        case .answered(let answer):
            apply(answer, to: decision)
        case .notImplemented:
            // Default handling, which the core does: the session's
            // credentials, the configuration's credential storage, the URL's
            // user and password; for server trust, default verification;
            // for a client certificate, none.
            // Reaching here, the session-level method was not implemented either.
            let method = decision.protectionSpace.authenticationMethod
            if method == NSURLAuthenticationMethodServerTrust || method == NSURLAuthenticationMethodClientCertificate,
                current.delegate == nil
            {
                session.noteDelegateIgnoresTLSChallenges()
            }
        case .abandoned:
            break
        }
    }

    private func apply(_ answer: ChallengeAnswer, to decision: ChallengeDecision) {
        ChallengeBridge.answer(decision, with: answer.disposition, credential: answer.credential)
    }

    /// Returns the stream the delegate handed over, if any.
    func bodyStream(_ decision: BodyStreamDecision, on current: URLSessionTask) async -> StreamBox? {
        let session = session
        let reply: Reply<StreamBox?> = await ask(
            URLSessionTaskDelegate.self, of: candidates(for: current), on: current, asyncForm: .bodyStream
        ) { delegate, answer in
            delegate.urlSession(session, task: current, needNewBodyStream: { answer($0.map(StreamBox.init)) })
        } orAsync: { delegate in
            await delegate.urlSession(session, needNewBodyStreamForTask: current).map(StreamBox.init)
        }
        switch reply {
        case .answered(let box?):
            decision.provide(box.stream)
            return box
        case .answered(nil): decision.refuse()
        case .notImplemented:
            // As Apple: the request's own stream serves the first send.
            if let stream = current.takeInitialBodyStream() { decision.provide(stream.stream) } else { decision.refuse() }
        case .abandoned: break
        }
        return nil
    }

    /// Asks a delegate-based data task's delegate whether to cache the
    /// response (completion-handler tasks store it as proposed, as Apple).
    func willCache(_ decision: CacheDecision, on current: URLSessionTask) async {
        guard delegateMode, let dataTask = current as? URLSessionDataTask else { return }
        let session = session
        let proposed = URLCache.foundationResponse(decision.proposedResponse)
        let reply: Reply<CachedResponseBox?> = await ask(
            URLSessionDataDelegate.self, of: candidates(for: current), on: current, asyncForm: .willCache
        ) { delegate, answer in
            delegate.urlSession(session, dataTask: dataTask, willCacheResponse: proposed) {
                answer($0.map(CachedResponseBox.init))
            }
        } orAsync: { delegate in
            await delegate.urlSession(session, dataTask: dataTask, willCacheResponse: proposed).map(CachedResponseBox.init)
        }
        switch reply {
        case .answered(let box?):
            if box.response === proposed {
                decision.store()
            } else if let changed = URLCache.coreResponse(box.response) {
                decision.store(changed)
            } else {
                decision.doNotStore()
            }
        case .answered(nil): decision.doNotStore()
        // Not implemented: stored as proposed.
        case .notImplemented, .abandoned: break
        }
    }

    /// Asks about a data task's response; returns the download task it became, if so.
    func respond(
        _ response: HTTPURLResponse, _ decision: ResponseDecision, on current: URLSessionTask
    ) async -> URLSessionTask? {
        // Download tasks and completion-handler tasks are not asked (as Apple).
        guard case .delegate = completion, let dataTask = current as? URLSessionDataTask else { return nil }
        let session = session
        let reply: Reply<URLSession.ResponseDisposition> = await ask(
            URLSessionDataDelegate.self, of: candidates(for: current), on: current, asyncForm: .response
        ) { delegate, answer in
            delegate.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: answer)
        } orAsync: { delegate in
            await delegate.urlSession(session, dataTask: dataTask, didReceive: response)
        }
        switch reply {
        case .answered(.allow), .notImplemented:
            decision.allow()
        case .answered(.cancel):
            decision.cancel()
        case .answered(.becomeDownload):
            let download = URLSessionDownloadTask(
                core: task.core, identifier: session.makeIdentifier(), session: session, started: true)
            download.delegate = dataTask.delegate
            session.replace(dataTask, with: download)
            dataTask.markHandedOver()
            decision.becomeDownload()
            // Before any download call: the driver pulls nothing until it returns.
            await notify(URLSessionDataDelegate.self, on: dataTask) { delegate in
                delegate.urlSession(session, dataTask: dataTask, didBecome: download)
            }
            return download
        case .abandoned:
            break
        }
        return nil
    }
}

/// A challenge's classic answer, as one Sendable value.
struct ChallengeAnswer: Sendable {
    let disposition: URLSession.AuthChallengeDisposition
    let credential: URLCredential?

    init(_ disposition: URLSession.AuthChallengeDisposition, _ credential: URLCredential?) {
        self.disposition = disposition
        self.credential = credential
    }
}

/// Moves an `InputStream` from the delegate's completion handler to the
/// decision. Safe to send because ownership moves with it: the delegate hands
/// the stream over and only the task reads it afterwards.
struct StreamBox: @unchecked Sendable {
    let stream: InputStream
}

/// Carries a delegate's `CachedURLResponse` answer to the driver.
/// `@unchecked`: Foundation's CachedURLResponse is immutable after init,
/// and the driver only reads it.
struct CachedResponseBox: @unchecked Sendable {
    let response: CachedURLResponse
}
