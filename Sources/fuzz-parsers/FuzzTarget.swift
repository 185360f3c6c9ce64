internal import AgentWire
internal import AsyncURLSession
internal import CurlEngine
import Foundation

/// One parser of untrusted bytes, by the name its corpus folder has.
struct FuzzTarget {
    let name: String

    static let all: [FuzzTarget] = (["response-head", "agent-frames"] + ParserFuzzing.parsers).map(FuzzTarget.init)

    static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }

    func run(_ bytes: UnsafeRawBufferPointer) {
        if name == "response-head" {
            CurlEngineFuzzing.responseHeads(bytes)
        } else if name == "agent-frames" {
            AgentWireFuzzing.frames(Data(bytes))
        } else {
            ParserFuzzing.run(name, Data(bytes))
        }
    }
}
