import Foundation

/// A WebSocket message, as `URLSessionWebSocketTask.Message`.
public enum WebSocketMessage: Sendable, Equatable {
    case string(String)
    case data(Data)
}

/// A close code (RFC 6455 §7.4), as `URLSessionWebSocketTask.CloseCode`.
public struct WebSocketCloseCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Not closed yet (Apple's `.invalid`).
    public static let invalid = WebSocketCloseCode(rawValue: 0)
    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// The peer's close frame carried no code.
    public static let noStatusReceived = WebSocketCloseCode(rawValue: 1005)
    /// The connection ended without a close frame.
    public static let abnormalClosure = WebSocketCloseCode(rawValue: 1006)
    public static let invalidFramePayloadData = WebSocketCloseCode(rawValue: 1007)
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    public static let mandatoryExtensionMissing = WebSocketCloseCode(rawValue: 1010)
    public static let internalServerError = WebSocketCloseCode(rawValue: 1011)
    public static let tlsHandshakeFailure = WebSocketCloseCode(rawValue: 1015)

    public var description: String { "\(rawValue)" }
}
