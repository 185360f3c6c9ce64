import Foundation
import Testing
import TestSupport

/// The scoped-import file names every public top-level declaration of the
/// toolchain's FoundationNetworking, so a name a library may import scoped
/// cannot be missed, now or after a toolchain update.
@Suite struct ScopedImportListTests {
    /// `swift-synthesize-interface`, beside the compiler on PATH.
    static let synthesizer: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for folder in path.split(separator: ":") {
            let candidate = "\(folder)/swift-synthesize-interface"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }()

    @Test(.enabled(if: synthesizer != nil, "the toolchain's swift-synthesize-interface is not on PATH"))
    func theScopedImportFile_namesEveryPublicDeclarationOfFoundationNetworking() async throws {
        let tool = try #require(Self.synthesizer)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("scoped-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let interface = folder.appendingPathComponent("FoundationNetworking.swiftinterface")
        let result = try await withTimeLimit(120) {
            try await ChildProcess.run(tool, [
                "-module-name", "FoundationNetworking", "-target", "\(Self.architecture)-unknown-linux-gnu",
                "-o", interface.path,
            ])
        }
        #expect(result.status == 0, "swift-synthesize-interface failed: \(result.errorText)")
        let declared = Self.topLevelDeclarations(try String(contentsOf: interface, encoding: .utf8))
        #expect(declared.count > 40, "too few declarations read from FoundationNetworking: \(declared)")

        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("ScopedImportsOfFoundationNetworking.swift")
        let imported = Set(try String(contentsOf: file, encoding: .utf8).split(separator: "\n").compactMap { line in
            line.hasPrefix("import ") && line.contains(" URLSessionCompat.")
                ? String(line.split(separator: " ").last!) : nil
        })
        let missing = declared.filter { !imported.contains("URLSessionCompat.\($0.name)") }
        #expect(missing.isEmpty, """
            FoundationNetworking declares names the scoped-import file lacks; add these lines to \
            \(file.lastPathComponent) (and a typealias in Sources/URLSessionCompat/Names if one is \
            ambiguous):
            \(missing.map { "import \($0.kind) URLSessionCompat.\($0.name)" }.joined(separator: "\n"))
            """)
    }

    static var architecture: String {
        #if arch(arm64)
        "aarch64"
        #else
        "x86_64"
        #endif
    }

    /// `class`, `struct`, `enum`, `protocol`, `typealias`, `func`, `let` and
    /// `var` declarations at the start of a line (top level), with the kind a
    /// scoped import spells (`var` for both `let` and `var`).
    static func topLevelDeclarations(_ interface: String) -> [(kind: String, name: String)] {
        let kinds: Set<Substring> = ["class", "struct", "enum", "protocol", "typealias", "func", "let", "var"]
        let modifiers: Set<Substring> = ["open", "public", "final"]
        var seen = Set<Substring>()
        var declarations: [(kind: String, name: String)] = []
        for line in interface.split(separator: "\n") where !line.hasPrefix(" ") && !line.hasPrefix("@") {
            let words = line.split(separator: " ")
            guard let index = words.firstIndex(where: { !modifiers.contains($0) }), index > 0,
                  kinds.contains(words[index]), index + 1 < words.count else { continue }
            let name = words[index + 1].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            guard !name.isEmpty, seen.insert(name).inserted else { continue }
            let kind = words[index] == "let" ? "var" : String(words[index])
            declarations.append((kind, String(name)))
        }
        return declarations
    }
}
