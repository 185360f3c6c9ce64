// What both AsyncURLSession clients set up the same way: the session for the
// run's concurrency and CA file, and the request template.
import AsyncURLSession
import BenchClientSupport
import Foundation

public enum SessionSetup {
    /// A session allowing `concurrency` connections per host, trusting the
    /// run's CA file when given, with `feature` (`--feature`) turned on when
    /// given. Exits 66 when the CA file cannot be read.
    public static func session(for arguments: ClientArguments, feature: SessionFeature? = nil) -> Session {
        var configuration = SessionConfiguration.default
        configuration.httpMaximumConnectionsPerHost = arguments.concurrency
        configuration.timeoutIntervalForRequest = 60
        configuration.tlsTrustRootsPEM = arguments.caCertificatePEMOrExit()
        feature?.configure(&configuration)
        return Session(configuration: configuration)
    }

    /// The GET, or the POST with `postBytes` of body, every request of the run sends.
    public static func request(for arguments: ClientArguments) -> URLRequest {
        arguments.requestTemplate(timeout: 60)
    }
}
