import Foundation

/// The agent protocol's parsing of bytes from a peer, for the fuzz harness
/// (`Sources/fuzz-parsers`, target "agent-frames"): bytes fed in pieces to
/// the frame decoder, each message decoded as a request and as a reply.
/// Whatever the bytes, it must end without a crash, and never hold more
/// than one over-limit length's worth of buffer.
package enum AgentWireFuzzing {
    package static func frames(_ data: Data) {
        var decoder = AgentFrameDecoder(maximumLength: 64 << 10)
        // The first byte picks the piece size, so splits are fuzzed too.
        let pieceSize = max(1, Int(data.first ?? 1))
        var offset = data.startIndex
        while offset < data.endIndex {
            let end = min(offset + pieceSize, data.endIndex)
            decoder.append(data[offset..<end])
            offset = end
            do {
                while let message = try decoder.next() {
                    _ = try? JSONDecoder().decode(AgentRequest.self, from: message)
                    _ = try? JSONDecoder().decode(AgentReply.self, from: message)
                }
            } catch {
                return  // an over-limit length: the connection would be closed
            }
        }
    }
}
