// URLSessionCompat: the classic URLSession API (delegates, delegate queue,
// completion handlers) rebuilt on the public API of AsyncURLSession.
//
// Why it exists: legacy code moves over by changing `import FoundationNetworking`
// to `import URLSessionCompat`. This module re-exports Foundation and
// FoundationNetworking and declares the classic names (`URLSession`,
// `URLSessionConfiguration`, `URLSessionTask`, the delegate protocols...);
// because it imports FoundationNetworking, its declarations shadow
// FoundationNetworking's in any file that imports it.
//
// Threading: every task has one driver (a Swift task) that pulls the core
// task's events in order and turns each into a delegate call, run as an
// operation on the session's delegate queue. The driver waits for each call
// (and for the completion handler of calls that decide something) before it
// pulls the next event, so one task's calls never overlap and a slow delegate
// slows its transfer instead of piling up memory.
//
// Ownership: a session keeps its delegate strongly until it is invalidated
// and its last task has completed; it keeps each task until the task's
// completion has been delivered.
//
// Errors: tasks complete with `URLError`, as URLSession's do. Sessions that
// were invalidated hand out tasks that fail at once with a clear message.
import AsyncURLSession
@_exported import Foundation
#if canImport(FoundationNetworking)
@_exported import FoundationNetworking
#endif

/// The client identity `URLSessionConfiguration.clientIdentity` takes, so
/// legacy code sets it without importing the async core.
public typealias ClientIdentity = AsyncURLSession.ClientIdentity

/// The retry policy `URLSessionConfiguration.retryPolicy` takes, and its
/// budget, so legacy code sets them without importing the async core.
public typealias RetryPolicy = AsyncURLSession.RetryPolicy
public typealias RetryBudget = AsyncURLSession.RetryBudget
/// The middleware `URLSessionConfiguration.middleware` takes, and what it
/// decides, so legacy code writes one without importing the async core.
public typealias RequestMiddleware = AsyncURLSession.RequestMiddleware
public typealias MiddlewareAttempt = AsyncURLSession.MiddlewareAttempt
public typealias MiddlewareLevel = AsyncURLSession.MiddlewareLevel
public typealias MiddlewareRequestStep = AsyncURLSession.MiddlewareRequestStep
public typealias MiddlewareResponseStep = AsyncURLSession.MiddlewareResponseStep
/// The reach types `URLSessionConfiguration`'s additions take (a Unix
/// socket, host overrides, the local side), so legacy code sets them
/// without importing the async core.
public typealias UnixSocket = AsyncURLSession.UnixSocket
public typealias HostOverride = AsyncURLSession.HostOverride
public typealias LocalEndpoint = AsyncURLSession.LocalEndpoint
public typealias IPVersionPolicy = AsyncURLSession.IPVersionPolicy
/// The recorder `URLSessionConfiguration.harRecorder` takes, and the HAR
/// model, so legacy code records without importing the async core.
public typealias HARRecorder = AsyncURLSession.HARRecorder
public typealias HAR = AsyncURLSession.HAR

/// A server-trust challenge's chain and default verdict
/// (`URLProtectionSpace.serverTrust`), Linux's stand-in for `SecTrust`.
public typealias ServerTrust = AsyncURLSession.ServerTrust
/// One certificate of a `ServerTrust`'s chain.
public typealias TLSCertificate = AsyncURLSession.TLSCertificate
/// Apple's name for a server-trust challenge (unavailable in
/// swift-corelibs-foundation, whose declaration this one shadows).
public let NSURLAuthenticationMethodServerTrust = AsyncURLSession.NSURLAuthenticationMethodServerTrust
/// Apple's name for a client-certificate challenge.
public let NSURLAuthenticationMethodClientCertificate = AsyncURLSession.NSURLAuthenticationMethodClientCertificate
