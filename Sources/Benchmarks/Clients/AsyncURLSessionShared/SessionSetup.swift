// What both AsyncURLSession clients set up the same way: the session for the
// run's concurrency and CA file, and the request template.
import AsyncURLSession
import BenchClientSupport
import Foundation

public enum SessionSetup {
    /// A session allowing `concurrency` connections per host, trusting the
    /// run's CA file when given, storing nothing (no cache, no cookies), with
    /// `feature` (`--feature`) turned on when given. Exits 66 when the CA
    /// file cannot be read.
    public static func session(for arguments: ClientArguments, feature: SessionFeature? = nil) -> Session {
        var configuration = SessionConfiguration.default
        configuration.httpMaximumConnectionsPerHost = arguments.concurrency
        configuration.timeoutIntervalForRequest = 60
        configuration.tlsTrustRootsPEM = arguments.caCertificatePEMOrExit()
        // Nothing answers from memory or disk: no response cache, no cookie
        // jar (`.default` has the shared ones), every request reloaded. A
        // `--feature` (cookies, cache) sets its own store below.
        configuration.responseCache = nil
        configuration.cookieJar = nil
        configuration.httpShouldSetCookies = false
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        feature?.configure(&configuration)
        return Session(configuration: configuration)
    }

    /// The GET, or the POST with `postBytes` of body, every request of the run sends.
    public static func request(for arguments: ClientArguments) -> URLRequest {
        arguments.requestTemplate(timeout: 60)
    }
}
