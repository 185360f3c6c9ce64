import CurlEngine
import Foundation
import Testing

@testable import AsyncURLSession

/// Every input of the fuzz corpus (Tests/FuzzCorpus, the seeds `.ci/fuzz`
/// starts from and the crashes it found) through its parser: none may
/// crash. A crash the fuzzer finds becomes a file there, and so a test.
@Suite struct FuzzCorpusTests {
    private static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("FuzzCorpus")

    private static func inputs(_ parser: String) throws -> [Data] {
        let folder = corpus.appendingPathComponent(parser)
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .map { try Data(contentsOf: $0) }
    }

    @Test(arguments: ParserFuzzing.parsers)
    func corpus_passesThroughTheParser(parser: String) throws {
        let inputs = try Self.inputs(parser)
        #expect(!inputs.isEmpty)
        for input in inputs { #expect(ParserFuzzing.run(parser, input)) }
    }

    @Test func corpus_passesThroughTheResponseHeadParser() throws {
        let inputs = try Self.inputs("response-head")
        #expect(!inputs.isEmpty)
        for input in inputs { input.withUnsafeBytes { CurlEngineFuzzing.responseHeads($0) } }
    }
}
