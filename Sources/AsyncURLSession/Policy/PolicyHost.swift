import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the policies above the hop may ask of the task they serve, and
/// nothing more. A policy (`HopPolicies`) decides from a hop's outcome; its
/// step (`HopStep.carryOut(on:)`) is carried out through these calls: read
/// or change the task's machine, start another hop, offer a decision, end
/// the task. The task (`TaskCore`) is the one host; the steps never see its
/// consumer, its hop's exchange or the engine.
protocol PolicyHost: AnyObject, Sendable {
    var identifier: Int { get }
    var context: SessionContext { get }
    /// The request the task was made with (its URL's user and password,
    /// whether it streams its body, its cookie settings).
    var originalRequest: URLRequest { get }
    var createdAt: Date { get }
    /// What an upload task was made to send.
    var upload: UploadSource { get }
    var log: TaskLog? { get }
    var observation: TaskObservation? { get }
    /// The URL errors name.
    var failingURLString: String? { get }
    /// `SessionTask.offersTLSChallenges`.
    var offersTLSChallenges: Bool { get }
    /// Whether the request's body cannot be sent again without a new
    /// stream (`needBodyStream`).
    func resendNeedsBodyStream(_ request: URLRequest) -> Bool
    /// Whether the task or its session has a handler to ask.
    var hasHandlers: Bool { get }
    /// Whether the task ended.
    var hasEnded: Bool { get }

    /// Runs `transition` on the task's machine under its lock. One machine
    /// call per use, as everywhere in the task.
    func machine<Result>(_ transition: (inout TaskMachine) -> sending Result) -> sending Result

    /// Another hop with `request` (through the middleware, then the router).
    func startHop(_ request: URLRequest, credential: HopCredential?)
    /// A hop with `request` as the middleware prepared it (to the router).
    func sendPrepared(_ request: URLRequest, credential: HopCredential?)
    /// A hop answered by `responder` instead of the router's choice (the
    /// cache's stored response after a 304, a middleware's answer).
    func answerLocally(_ request: URLRequest, responder: any LocalResponder, credential: HopCredential?)
    /// The response the middleware inspected and accepted goes on as any
    /// other: to the handlers, then the consumer.
    func deliverInspected(_ source: ResponseSource, heldBody: Data?)
    /// Ends the task with `error` (nil: the response delivered) and the
    /// metrics of every hop.
    func completeWithTransactions(error: URLError?)
    /// The held 3xx/401/407 and its body become the task's result.
    func stopAtHeldResponse(_ held: HopState.Held)
    /// Offers `decision` to the handlers, then an events consumer; with
    /// nobody to ask it takes its default.
    func offerDecision(
        _ event: TaskEvent, _ decision: any PendingDecision,
        ask: @escaping @Sendable (any SessionTaskDelegate, SessionTask) async -> Void)
    /// Tells an events consumer and the handlers (each through `tell`) of
    /// `event`; nothing waits for an answer. `consumerFirst`: the consumer
    /// hears of it at once, the handlers in a Swift task; else the consumer
    /// after the handlers returned.
    func announce(
        _ event: TaskEvent, consumerFirst: Bool,
        tell: @escaping @Sendable (any SessionTaskDelegate, SessionTask) async -> Void)
}
