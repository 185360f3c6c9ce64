import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A hop ended on a 401 or 407 (`HopPolicies.authentication`, or a proxy's
/// refused CONNECT): a challenge is offered for the first method the server
/// offered that we speak and nobody rejected, and its answer sends the
/// request again with a credential, or makes the 401/407 the result.
enum AuthenticationChallenging {
    /// Attempts per protection space before a 401 is simply the result, so a
    /// handler that keeps answering with a wrong password cannot loop forever.
    static let maximumAttempts = 5

    static func offer(_ held: HopState.Held, on task: some PolicyHost) {
        let (request, originCredential, usedProxyCredential, rejected) = task.machine { $0.challengeInputs }
        let isProxy = held.response.statusCode == 407
        let usedCredential = isProxy ? usedProxyCredential : originCredential
        let offered = HopState.challenges(in: held.response).filter { challenge in
            guard let method = challenge.authenticationMethod else { return false }
            return !rejected.contains(method)
        }
        guard let challenge = offered.first, let method = challenge.authenticationMethod, let url = request.url else {
            task.stopAtHeldResponse(held)
            return
        }
        let context = task.context
        // A 407 is answered to the session's proxy. Without one (a server
        // that sends 407 itself) it is still offered, as Apple does, but
        // there is nobody to send a credential to: the 407 is the result.
        let proxySpace = isProxy
            ? ProxyAuthentication.space(for: url, realm: challenge.realm, method: method, in: context.configuration)
            : nil
        let space = proxySpace ?? URLProtectionSpace(
            host: url.host ?? "", port: url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80),
            protocol: url.scheme?.lowercased(), realm: challenge.realm, authenticationMethod: method)
        let answerable = !isProxy || proxySpace != nil
        let key = CredentialStore.key(for: space)
        let failures = task.machine { $0.history.challenged(for: key, credentialWasSent: usedCredential != nil) }
        guard failures < maximumAttempts else {
            task.stopAtHeldResponse(held)
            return
        }
        // Default handling uses a stored credential, else the URL's
        // user:password, and only before one has failed here.
        let defaultCredential = context.credentials.credential(for: space)
            ?? context.configuration.credentialStorage?.defaultCredential(for: space)
            ?? (isProxy ? nil : urlCredential(of: task.originalRequest))
        // As Apple: after a failure the challenge proposes the credential
        // that failed (so a handler can show its user name again).
        let proposed = failures > 0 ? usedCredential?.credential ?? defaultCredential : defaultCredential
        let decision = ChallengeDecision(
            protectionSpace: space, proposedCredential: proposed, previousFailureCount: failures,
            failureResponse: held.response)
        // The origin's credential goes on the request; the proxy's to the
        // proxy only, for this task's later hops too.
        let retry: @Sendable (HopCredential) -> Void = { [weak task] credential in
            guard let task else { return }
            if isProxy {
                task.machine { $0.connection().answered(proxyCredential: credential) }
                if credential.credential.persistence != .none {
                    context.proxyAnswer.withLock { $0 = credential }
                }
                task.startHop(request, credential: originCredential)
            } else {
                task.startHop(request, credential: credential)
            }
        }
        decision.core.onSettle { [weak task] answer in
            guard let task else { return }
            switch answer {
            case .useCredential(let credential):
                guard answerable else { return task.stopAtHeldResponse(held) }
                remember(credential, for: space, in: context)
                retry(HopCredential(credential: credential, method: method))
            case .performDefaultHandling:
                if let defaultCredential, failures == 0, answerable {
                    retry(HopCredential(credential: defaultCredential, method: method))
                } else {
                    task.stopAtHeldResponse(held)
                }
            case .cancel:
                // Apple's description of a cancelled task, as `cancel()`'s.
                task.completeWithTransactions(
                    error: URLError.make(.cancelled, url: task.failingURLString, reason: "cancelled"))
            case .rejectProtectionSpace:
                task.machine { $0.history.rejected(method: method) }
                offer(held, on: task)
            }
        }
        task.offerDecision(.challenge(decision), decision.core) { handler, task in
            await handler.task(task, didReceive: decision)
        }
    }

    /// The user and password written in the task's URL, if any.
    private static func urlCredential(of request: URLRequest) -> URLCredential? {
        guard let user = request.url?.user, let password = request.url?.password else { return nil }
        return URLCredential(user: user, password: password, persistence: .forSession)
    }

    /// As Apple: `.forSession` answers are kept by the session, `.permanent`
    /// ones by the configuration's credential storage (by the session when
    /// there is none), `.none` ones nowhere.
    private static func remember(_ credential: URLCredential, for space: URLProtectionSpace, in context: SessionContext) {
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
}
