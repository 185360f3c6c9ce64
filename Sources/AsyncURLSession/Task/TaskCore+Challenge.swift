internal import CurlEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TaskCore {
    /// Attempts per protection space before a 401 is simply the result, so a
    /// handler that keeps answering with a wrong password cannot loop forever.
    static let maximumAuthenticationAttempts = 5

    /// The user and password written in the task's URL, if any.
    private func urlCredential() -> URLCredential? {
        guard let user = originalRequest.url?.user, let password = originalRequest.url?.password else { return nil }
        return URLCredential(user: user, password: password, persistence: .forSession)
    }

    /// As Apple: `.forSession` answers are kept by the session, `.permanent`
    /// ones by the configuration's credential storage (by the session when
    /// there is none), `.none` ones nowhere.
    private func remember(_ credential: URLCredential, for space: URLProtectionSpace) {
        switch credential.persistence {
        case .none:
            return
        case .permanent:
            if let storage = context.configuration.credentialStorage {
                storage.set(credential, for: space)
                return
            }
            context.credentials.set(credential, for: space)
        default:
            context.credentials.set(credential, for: space)
        }
    }

    /// A hop ended on a 401/407: offer a challenge for the first method the
    /// server offered that we speak and nobody rejected.
    func offerChallenge(_ held: HopState.Held) {
        let (request, originCredential, usedProxyCredential, rejected) = guarded.withLock { $0.challengeInputs }
        let isProxy = held.response.statusCode == 407
        let usedCredential = isProxy ? usedProxyCredential : originCredential
        let offered = HopState.challenges(in: held.response).filter { challenge in
            guard let method = challenge.authenticationMethod else { return false }
            return !rejected.contains(method)
        }
        guard let challenge = offered.first, let method = challenge.authenticationMethod, let url = request.url else {
            stopAtHeldResponse(held)
            return
        }
        // A 407 is answered to the session's proxy. Without one (a server
        // that sends 407 itself) it is still offered, as Apple does, but
        // there is nobody to send a credential to: the 407 is the result.
        let proxySpace = isProxy ? proxySpace(for: url, realm: challenge.realm, method: method) : nil
        let space = proxySpace ?? URLProtectionSpace(
            host: url.host ?? "", port: url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80),
            protocol: url.scheme?.lowercased(), realm: challenge.realm, authenticationMethod: method)
        let answerable = !isProxy || proxySpace != nil
        let key = CredentialStore.key(for: space)
        let failures = guarded.withLock { $0.history.challenged(for: key, credentialWasSent: usedCredential != nil) }
        guard failures < Self.maximumAuthenticationAttempts else {
            stopAtHeldResponse(held)
            return
        }
        // Default handling uses a stored credential, else the URL's
        // user:password, and only before one has failed here.
        let defaultCredential = context.credentials.credential(for: space)
            ?? context.configuration.credentialStorage?.defaultCredential(for: space)
            ?? (isProxy ? nil : urlCredential())
        // As Apple: after a failure the challenge proposes the credential
        // that failed (so a handler can show its user name again).
        let proposed = failures > 0 ? usedCredential?.credential ?? defaultCredential : defaultCredential
        let decision = ChallengeDecision(
            protectionSpace: space, proposedCredential: proposed, previousFailureCount: failures,
            failureResponse: held.response)
        // The origin's credential goes on the request; the proxy's to the
        // proxy only, for this task's later hops too.
        let retry: @Sendable (HopCredential) -> Void = { [weak self] credential in
            guard let self else { return }
            if isProxy {
                guarded.withLock { $0.connection().answered(proxyCredential: credential) }
                if credential.credential.persistence != .none {
                    context.proxyAnswer.withLock { $0 = credential }
                }
                startHop(request, credential: originCredential)
            } else {
                startHop(request, credential: credential)
            }
        }
        decision.core.onSettle { [weak self] answer in
            guard let self else { return }
            switch answer {
            case .useCredential(let credential):
                guard answerable else { return stopAtHeldResponse(held) }
                remember(credential, for: space)
                retry(HopCredential(credential: credential, method: method))
            case .performDefaultHandling:
                if let defaultCredential, failures == 0, answerable {
                    retry(HopCredential(credential: defaultCredential, method: method))
                } else {
                    stopAtHeldResponse(held)
                }
            case .cancel:
                // Apple's description of a cancelled task, as `cancel()`'s.
                completeWithTransactions(error: URLError.make(.cancelled, url: failingURLString, reason: "cancelled"))
            case .rejectProtectionSpace:
                guarded.withLock { $0.history.rejected(method: method) }
                offerChallenge(held)
            }
        }
        offerDecision(.challenge(decision), decision.core) { handler, task in
            await handler.task(task, didReceive: decision)
        }
    }
}
