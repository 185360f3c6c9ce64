internal import AsyncURLSession
internal import CurlEngine
import Foundation

/// One parser of untrusted bytes, by the name its corpus folder has.
struct FuzzTarget {
    let name: String

    static let all: [FuzzTarget] = (["response-head"] + ParserFuzzing.parsers).map(FuzzTarget.init)

    static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }

    func run(_ bytes: UnsafeRawBufferPointer) {
        if name == "response-head" {
            CurlEngineFuzzing.responseHeads(bytes)
        } else {
            ParserFuzzing.run(name, Data(bytes))
        }
    }
}
