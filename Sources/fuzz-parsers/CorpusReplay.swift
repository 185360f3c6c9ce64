#if !FUZZING
import Foundation

/// Without libFuzzer (a plain build): every seed of the corpus, then a
/// fixed number of deterministic mutations of each (bytes flipped, cut,
/// repeated, spliced with another seed), through every parser. What CI's
/// tests run on every build; `.ci/fuzz` runs the real fuzzer.
///
///     swift run fuzz-parsers [corpus folder] [mutations per seed]
@main
struct CorpusReplay {
    static func main() throws {
        let arguments = CommandLine.arguments.dropFirst()
        let corpus = URL(fileURLWithPath: arguments.first ?? "Tests/FuzzCorpus")
        let mutations = arguments.dropFirst().first.flatMap(Int.init) ?? 200
        var generator = SplitMix64(seed: 0x5EED)
        for target in FuzzTarget.all {
            let folder = corpus.appendingPathComponent(target.name)
            let seeds = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
                .sorted { $0.lastPathComponent < $1.lastPathComponent }
                .map { try Data(contentsOf: $0) }
            guard !seeds.isEmpty else {
                FileHandle.standardError.write(Data("no seeds in \(folder.path)\n".utf8))
                exit(1)
            }
            let started = Date()
            var runs = 0
            for seed in seeds {
                run(target, seed)
                runs += 1
                for _ in 0..<mutations {
                    run(target, Mutation.apply(to: seed, other: seeds.randomElement(using: &generator)!, using: &generator))
                    runs += 1
                }
            }
            print("\(target.name): \(seeds.count) seeds, \(runs) inputs, \(String(format: "%.2f", Date().timeIntervalSince(started))) s")
        }
    }

    private static func run(_ target: FuzzTarget, _ data: Data) {
        data.withUnsafeBytes { target.run($0) }
    }
}

/// A small deterministic generator, so that a failing replay fails again.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The mutations libFuzzer starts with, in miniature.
enum Mutation {
    static func apply(to seed: Data, other: Data, using generator: inout SplitMix64) -> Data {
        var bytes = [UInt8](seed)
        let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &generator)
        switch Int.random(in: 0..<6, using: &generator) {
        case 0 where !bytes.isEmpty:
            bytes[position] ^= UInt8(1 << Int.random(in: 0..<8, using: &generator))
        case 1 where !bytes.isEmpty:
            bytes[position] = [0, 0x0A, 0x0D, 0x3A, 0x3B, 0x22, 0x2C, 0x3D, 0xFF, 0x80].randomElement(using: &generator)!
        case 2:
            bytes = Array(bytes.prefix(position))
        case 3 where !bytes.isEmpty:
            let end = min(bytes.count, position + Int.random(in: 1...16, using: &generator))
            bytes.insert(contentsOf: bytes[position..<end], at: position)
        case 4:
            let cut = other.isEmpty ? 0 : Int.random(in: 0..<other.count, using: &generator)
            bytes = Array(bytes.prefix(position)) + Array(other.dropFirst(cut))
        default:
            bytes.insert(UInt8.random(in: 0...255, using: &generator), at: position)
        }
        return Data(bytes)
    }
}
#endif
