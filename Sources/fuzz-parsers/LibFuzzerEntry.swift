#if FUZZING
import CFuzzerDriver
import Foundation

// Built by `.ci/fuzz` with -sanitize=fuzzer,address and -DFUZZING. SwiftPM
// gives every executable its own main, so libFuzzer runs through its
// driver entry instead of its main; FUZZ_PARSER names the parser (one per
// run, as libFuzzer wants one target per process).
private let target: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["FUZZ_PARSER"] ?? ""
    guard let target = FuzzTarget.named(name) else {
        fatalError("set FUZZ_PARSER to one of: \(FuzzTarget.all.map(\.name).joined(separator: ", "))")
    }
    return target
}()

/// libFuzzer's library refers to this symbol even when run through its
/// driver entry; both paths fuzz the same target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    target.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

@main
struct LibFuzzerMain {
    static func main() {
        _ = target
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        let status = withUnsafeMutablePointer(to: &argv) { argvPointer in
            argvPointer.withMemoryRebound(to: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?.self, capacity: 1) {
                LLVMFuzzerRunDriver(&argc, $0) { data, size in fuzzOneInput(data, size) }
            }
        }
        exit(status)
    }
}
#endif
