import Foundation

extension ProxyConfiguration {
    /// The proxies the environment names, the way curl reads them: `http_proxy`
    /// for http URLs, `https_proxy` for https ones, `all_proxy` for both when
    /// those are unset, `no_proxy` for the exceptions; each lower case first,
    /// then upper case, except `HTTP_PROXY` (a CGI server sets it from a
    /// request's `Proxy:` header: "httpoxy"). Values are `host:port`,
    /// `http://[user:password@]host:port`, or `socks5://` / `socks5h://`
    /// (SOCKS5). Nil when none is set.
    ///
    /// Sessions never read the environment by themselves: this is the opt-in.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> ProxyConfiguration? {
        func value(_ name: String, upperCaseToo: Bool = true) -> String? {
            let found = environment[name] ?? (upperCaseToo ? environment[name.uppercased()] : nil)
            guard let found, !found.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
            return found.trimmingCharacters(in: .whitespaces)
        }
        var configuration = ProxyConfiguration()
        var found = false
        func apply(_ text: String?, to keyPath: WritableKeyPath<ProxyConfiguration, Server?>) {
            guard let text, let parsed = parse(text) else { return }
            found = true
            if parsed.isSOCKS {
                configuration.socks = parsed.server
            } else {
                configuration[keyPath: keyPath] = parsed.server
            }
            if configuration.user == nil, let user = parsed.user {
                configuration.user = user
                configuration.password = parsed.password
            }
        }
        apply(value("http_proxy", upperCaseToo: false), to: \.http)
        apply(value("https_proxy"), to: \.https)
        if configuration.http == nil || configuration.https == nil, let all = value("all_proxy"), let parsed = parse(all) {
            found = true
            if parsed.isSOCKS {
                configuration.socks = configuration.socks ?? parsed.server
            } else {
                configuration.http = configuration.http ?? parsed.server
                configuration.https = configuration.https ?? parsed.server
            }
            if configuration.user == nil, let user = parsed.user {
                configuration.user = user
                configuration.password = parsed.password
            }
        }
        guard found else { return nil }
        configuration.exceptions = (value("no_proxy") ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return configuration
    }

    private static func parse(_ text: String) -> (server: Server, isSOCKS: Bool, user: String?, password: String?)? {
        let withScheme = text.contains("://") ? text : "http://" + text
        guard let components = URLComponents(string: withScheme), let host = components.host, !host.isEmpty else {
            return nil
        }
        let scheme = components.scheme?.lowercased() ?? "http"
        let isSOCKS = scheme.hasPrefix("socks")
        guard isSOCKS || scheme == "http" else { return nil }
        let port = components.port ?? (isSOCKS ? 1080 : 80)
        return (Server(host: host, port: port), isSOCKS, components.user?.removingPercentEncoding,
                components.password?.removingPercentEncoding)
    }
}
