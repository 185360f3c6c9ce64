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

/// What the two newest fuzz targets check, as plain tests of the seeds.
@Suite struct FuzzInvariantTests {
    @Test func cookieFile_dropsCookiesNoResponseCouldHaveSet() throws {
        // A cookie for a public suffix and one whose name holds CR/LF.
        let data = Data(#"""
            [{"name":"a","value":"b","domain":"co.uk","hostOnly":false,"path":"/","secure":true,"httpOnly":false,"expires":1900000000,"created":1700000000},
             {"name":"x\r\ny","value":"v","domain":"example.co.uk","hostOnly":false,"path":"/","secure":false,"httpOnly":false,"expires":1900000000,"created":1700000000},
             {"name":"ok","value":"v","domain":"example.co.uk","hostOnly":false,"path":"/","secure":false,"httpOnly":false,"expires":1900000000,"created":1700000000}]
            """#.utf8)
        let cookies = try #require(CookieFile.decode(
            data, now: Date(timeIntervalSince1970: 1_800_000_000), policy: CookiePolicy(publicSuffixes: .system)))
        #expect(cookies.map(\.name) == ["ok"])
    }

    @Test func cookieFile_refusesBytesThatAreNotACookieList() {
        let policy = CookiePolicy(publicSuffixes: .system)
        #expect(CookieFile.decode(Data(#"{"not":"a list"}"#.utf8), now: Date(), policy: policy) == nil)
        #expect(CookieFile.decode(Data([0xFF, 0x00]), now: Date(), policy: policy) == nil)
    }

    @Test func requestHeaders_configurationHeaderWithCRLFIsRefused() {
        var configuration = SessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders["X-Conf"] = "a\r\nX-Injected: yes"
        let result = RequestPreparation.transferRequest(
            for: URLRequest(url: URL(string: "http://127.0.0.1/")!), configuration: configuration, body: .none)
        guard case .failure(let error) = result else {
            Issue.record("a header with CR/LF was accepted")
            return
        }
        #expect(error.code == .badURL)
    }
}
