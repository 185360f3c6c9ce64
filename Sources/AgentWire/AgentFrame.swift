import Foundation

/// The framing of messages between programs and the agent: each message is
/// a 4-byte big-endian length, then that many bytes (a JSON document).
///
/// A decoder fed bytes as they arrive yields whole messages; a length above
/// `maximumLength` is an error, so a confused or hostile peer cannot make
/// the other side buffer without bound.
package struct AgentFrameDecoder: Sendable {
    /// Requests and events are small (no bodies cross the socket: files do
    /// by name); 4 MiB leaves room for a request with very many headers.
    package static let defaultMaximumLength = 4 << 20

    private var buffer = Data()
    private let maximumLength: Int

    package init(maximumLength: Int = AgentFrameDecoder.defaultMaximumLength) {
        self.maximumLength = maximumLength
    }

    /// Adds bytes read from the socket.
    package mutating func append(_ bytes: Data) { buffer.append(bytes) }

    /// The next whole message, nil when more bytes are needed.
    package mutating func next() throws(AgentWireError) -> Data? {
        guard buffer.count >= 4 else { return nil }
        let start = buffer.startIndex
        let length = buffer[start..<start + 4].reduce(0) { $0 << 8 | Int($1) }
        guard length <= maximumLength else {
            throw AgentWireError("a message of \(length) bytes is over the limit of \(maximumLength): the peer is not speaking the agent's protocol")
        }
        guard buffer.count >= 4 + length else { return nil }
        let message = buffer.subdata(in: start + 4..<start + 4 + length)
        buffer.removeSubrange(start..<start + 4 + length)
        return message
    }

    /// Bytes received that do not yet make a message.
    package var pendingCount: Int { buffer.count }
}

package enum AgentFrameEncoder {
    /// `message` with its length in front.
    package static func frame(_ message: Data) throws(AgentWireError) -> Data {
        guard message.count <= AgentFrameDecoder.defaultMaximumLength else {
            throw AgentWireError("a message of \(message.count) bytes is over the agent protocol's limit")
        }
        var framed = Data(capacity: 4 + message.count)
        let length = UInt32(message.count)
        framed.append(contentsOf: [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
        framed.append(message)
        return framed
    }
}
