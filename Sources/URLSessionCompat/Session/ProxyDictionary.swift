import AsyncURLSession
import Foundation

// Apple's CFNetwork key names for `connectionProxyDictionary`. Linux has no
// CFNetwork; these are the same strings, so code that builds the dictionary
// with the constants compiles unchanged.
public let kCFNetworkProxiesHTTPEnable = "HTTPEnable"
public let kCFNetworkProxiesHTTPProxy = "HTTPProxy"
public let kCFNetworkProxiesHTTPPort = "HTTPPort"
public let kCFNetworkProxiesHTTPSEnable = "HTTPSEnable"
public let kCFNetworkProxiesHTTPSProxy = "HTTPSProxy"
public let kCFNetworkProxiesHTTPSPort = "HTTPSPort"
public let kCFNetworkProxiesSOCKSEnable = "SOCKSEnable"
public let kCFNetworkProxiesSOCKSProxy = "SOCKSProxy"
public let kCFNetworkProxiesSOCKSPort = "SOCKSPort"
public let kCFNetworkProxiesExceptionsList = "ExceptionsList"
public let kCFProxyUsernameKey = "kCFProxyUsernameKey"
public let kCFProxyPasswordKey = "kCFProxyPasswordKey"

/// The core's proxy settings, for `URLSessionConfiguration.proxyConfiguration`.
public typealias ProxyConfiguration = AsyncURLSession.ProxyConfiguration

extension ProxyConfiguration {
    /// Reads Apple's dictionary: each scheme's proxy when its Enable key is
    /// true (or absent while its host is set, as CFNetwork reads it). Nil
    /// when no proxy is enabled.
    init?(dictionary: [AnyHashable: Any]) {
        func string(_ key: String) -> String? {
            (dictionary[key] as? String) ?? (dictionary[key] as? NSString).map { String($0) }
        }
        func number(_ key: String) -> Int? {
            if let value = dictionary[key] as? Int { return value }
            if let value = dictionary[key] as? NSNumber { return value.intValue }
            if let value = string(key) { return Int(value) }
            return nil
        }
        func enabled(_ key: String, host: String) -> Bool {
            if let value = dictionary[key] as? Bool { return value }
            if let value = dictionary[key] as? NSNumber { return value.boolValue }
            if let value = number(key) { return value != 0 }
            return string(host) != nil
        }
        func server(enable: String, host: String, port: String, defaultPort: Int) -> Server? {
            guard enabled(enable, host: host), let name = string(host), !name.isEmpty else { return nil }
            return Server(host: name, port: number(port) ?? defaultPort)
        }
        self.init(
            http: server(enable: kCFNetworkProxiesHTTPEnable, host: kCFNetworkProxiesHTTPProxy,
                         port: kCFNetworkProxiesHTTPPort, defaultPort: 80),
            https: server(enable: kCFNetworkProxiesHTTPSEnable, host: kCFNetworkProxiesHTTPSProxy,
                          port: kCFNetworkProxiesHTTPSPort, defaultPort: 443),
            socks: server(enable: kCFNetworkProxiesSOCKSEnable, host: kCFNetworkProxiesSOCKSProxy,
                          port: kCFNetworkProxiesSOCKSPort, defaultPort: 1080),
            exceptions: (dictionary[kCFNetworkProxiesExceptionsList] as? [String])
                ?? (dictionary[kCFNetworkProxiesExceptionsList] as? [Any])?.compactMap { $0 as? String } ?? [],
            user: string(kCFProxyUsernameKey), password: string(kCFProxyPasswordKey))
        if http == nil, https == nil, socks == nil { return nil }
    }

    /// The same settings in Apple's dictionary form.
    var connectionProxyDictionary: [AnyHashable: Any] {
        var dictionary: [AnyHashable: Any] = [:]
        if let http {
            dictionary[kCFNetworkProxiesHTTPEnable] = true
            dictionary[kCFNetworkProxiesHTTPProxy] = http.host
            dictionary[kCFNetworkProxiesHTTPPort] = http.port
        }
        if let https {
            dictionary[kCFNetworkProxiesHTTPSEnable] = true
            dictionary[kCFNetworkProxiesHTTPSProxy] = https.host
            dictionary[kCFNetworkProxiesHTTPSPort] = https.port
        }
        if let socks {
            dictionary[kCFNetworkProxiesSOCKSEnable] = true
            dictionary[kCFNetworkProxiesSOCKSProxy] = socks.host
            dictionary[kCFNetworkProxiesSOCKSPort] = socks.port
        }
        if !exceptions.isEmpty { dictionary[kCFNetworkProxiesExceptionsList] = exceptions }
        if let user { dictionary[kCFProxyUsernameKey] = user }
        if let password { dictionary[kCFProxyPasswordKey] = password }
        return dictionary
    }
}
