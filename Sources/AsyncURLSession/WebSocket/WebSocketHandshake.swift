internal import CurlEngine
import Foundation

/// The opening handshake of RFC 6455 §4: the Upgrade request's fields, and
/// the checks of the server's answer that tell a WebSocket server from
/// anything else (a cache, a proxy that answered for it, a misconfigured
/// host).
struct WebSocketHandshake: Sendable {
    /// Sec-WebSocket-Key: 16 random bytes, base64.
    let key: String
    let protocols: [String]

    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    init(protocols: [String], key: String = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()) {
        self.key = key
        self.protocols = protocols
    }

    /// The fields the Upgrade request adds to the user's own.
    var requestFields: [(name: String, value: String)] {
        var fields = [
            (name: "Upgrade", value: "websocket"), (name: "Connection", value: "Upgrade"),
            (name: "Sec-WebSocket-Key", value: key), (name: "Sec-WebSocket-Version", value: "13"),
        ]
        if !protocols.isEmpty { fields.append((name: "Sec-WebSocket-Protocol", value: protocols.joined(separator: ", "))) }
        return fields
    }

    /// The Sec-WebSocket-Accept a server must answer `key` with.
    static func accept(for key: String) -> String? {
        CertificateSummary.sha1(Data((key + guid).utf8))?.base64EncodedString()
    }

    enum Failure: Error, Equatable, CustomStringConvertible {
        case notUpgraded(status: Int)
        case missingUpgrade
        case wrongAccept
        case unofferedProtocol(String)
        case extensionsNotOffered(String)

        var description: String {
            switch self {
            case .notUpgraded(let status):
                "The server answered the WebSocket handshake with \(status), not 101 Switching Protocols: "
                    + "check the URL and that the server speaks WebSocket there."
            case .missingUpgrade:
                "The server's 101 does not say Upgrade: websocket and Connection: Upgrade; it is not a WebSocket server."
            case .wrongAccept:
                "The server's Sec-WebSocket-Accept does not match the key sent (RFC 6455 §4.2.2): "
                    + "something between us and the server answered in its place."
            case .unofferedProtocol(let name):
                "The server chose the subprotocol '\(name)', which was not offered."
            case .extensionsNotOffered(let value):
                "The server turned on extensions ('\(value)') although none were offered."
            }
        }
    }

    /// Checks the server's answer; returns the subprotocol it chose, if any.
    /// `allowingMissingAccept`: a 101 without Sec-WebSocket-Accept passes
    /// (a wrong one never does); the classic adapter asks for it because
    /// FoundationNetworking's libcurl never checked the field and servers
    /// written against it may leave it out.
    func validate(
        status: Int, allowingMissingAccept: Bool = false, field: (String) -> String?
    ) throws(Failure) -> String? {
        guard status == 101 else { throw .notUpgraded(status: status) }
        guard field("Upgrade")?.lowercased() == "websocket",
            field("Connection")?.lowercased().split(separator: ",").contains(where: {
                $0.trimmingCharacters(in: .whitespaces) == "upgrade"
            }) == true
        else { throw .missingUpgrade }
        if let accept = field("Sec-WebSocket-Accept")?.trimmingCharacters(in: .whitespaces) {
            guard accept == Self.accept(for: key) else { throw .wrongAccept }
        } else if !allowingMissingAccept {
            throw .wrongAccept
        }
        if let extensions = field("Sec-WebSocket-Extensions"), !extensions.isEmpty {
            throw .extensionsNotOffered(extensions)
        }
        guard let chosen = field("Sec-WebSocket-Protocol")?.trimmingCharacters(in: .whitespaces), !chosen.isEmpty
        else { return nil }
        guard protocols.contains(chosen) else { throw .unofferedProtocol(chosen) }
        return chosen
    }
}
