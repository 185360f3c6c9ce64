import Foundation
import LoopbackServer
import Testing
import TestSupport

/// What a program leaves on disk when it ends right after its last
/// response, as command-line tools do: each test runs `user-program` (a
/// classic completion-handler task on a `.default` session, then the end
/// of main) in a process of its own, with a home folder of its own.
@Suite struct ProgramExitTests {
    private func userProgram() throws -> String {
        let path = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("user-program").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw ProgramMissing(path: path)
        }
        return path
    }

    private func privateHome() throws -> URL {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("home-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        return home
    }

    @Test func persistentCookie_setJustBeforeTheProgramEnds_isSentByTheNextRun() async throws {
        try await withServer { server in
            let home = try privateHome()
            defer { try? FileManager.default.removeItem(at: home) }
            let environment = ["HOME": home.path, "XDG_DATA_HOME": home.appendingPathComponent("data").path]
            let program = try userProgram()
            let first = try await ChildProcess.run(
                program, ["fetch-default", server.url("/cookies/set?keep=1%3B%20Max-Age%3D3600").absoluteString],
                environment: environment)
            #expect(first.status == 0, "\(first.errorText)")
            #expect(first.outputText == "cookies set")
            let second = try await ChildProcess.run(
                program, ["fetch-default", server.url("/cookies/echo").absoluteString], environment: environment)
            #expect(second.status == 0, "\(second.errorText)")
            #expect(second.outputText == "keep=1")
        }
    }
}

struct ProgramMissing: Error, CustomStringConvertible {
    let path: String
    var description: String { "\(path) is not built; `swift build --build-tests` builds it" }
}
