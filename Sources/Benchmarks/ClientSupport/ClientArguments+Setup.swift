// What the Swift clients derive from their arguments the same way.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ClientArguments {
    /// A client's start, the same in each: its command line (exits 64 when it
    /// is bad), then the descriptor limit raised to the hard one (W7 opens
    /// 10,000 sockets) before anything opens one.
    public static func parseAndPrepareOrExit() -> ClientArguments {
        let arguments = parseOrExit()
        ProcessLimits.raiseFileDescriptorLimit()
        return arguments
    }

    /// Bodies are consumed chunk by chunk (`--stream`, or a slow consumer).
    public var streamsBodies: Bool { stream || consumeBytesPerSecond > 0 }

    /// The PEM bytes of `--cacert`, nil without it. Exits 66 (EX_NOINPUT) when
    /// the file cannot be read.
    public func caCertificatePEMOrExit() -> Data? {
        guard let caPath = caCertificatePath else { return nil }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: caPath))
        } catch {
            FileHandle.standardError.write(Data("cannot read \(caPath): \(error)\n".utf8))
            exit(66)
        }
    }

    /// The GET, or the POST with `postBytes` zero bytes, every request of the run sends.
    public func requestTemplate(timeout: TimeInterval) -> URLRequest {
        var template = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        if isPost {
            template.httpMethod = "POST"
            template.httpBody = Data(count: postBytes)
        }
        return template
    }

    /// FoundationNetworking's session settings for this run (bench-foundation
    /// and the OpenAPI client on URLSessionTransport): ephemeral, no cache,
    /// no cookies, C connections per host.
    public func foundationConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = concurrency
        configuration.timeoutIntervalForRequest = 120
        configuration.timeoutIntervalForResource = timeoutSeconds
        configuration.urlCache = nil
        // An ephemeral configuration keeps cookies in memory: none here.
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return configuration
    }
}
