import Foundation
import Testing
import TestSupport

/// The suite's way of running programs (`ChildProcess`), checked as the
/// tests use it.
@Suite struct ChildProcessTests {
    /// The CI crash of stop 39: Foundation.Process died reading
    /// /proc/self/fd with about 1,360 descriptors open. With more than that
    /// open here, the child still runs, and inherits none of them.
    @Test func manyOpenDescriptors_areNeitherReadNorInherited() async throws {
        try await withDeadline(seconds: 30) {
            var held: [Int32] = []
            defer { held.forEach { close($0) } }
            for _ in 0..<1_500 {
                let fd = open("/dev/null", O_RDONLY)
                guard fd >= 0 else { break }
                held.append(fd)
            }
            try #require(held.count == 1_500, "could not open 1,500 descriptors (ulimit -n)")
            let result = try await ChildProcess.run("/bin/ls", ["/proc/self/fd"])
            #expect(result.status == 0)
            // ls's own: 0, 1, 2 and the directory it reads.
            let listed = result.outputText.split(separator: "\n")
            #expect(listed.count <= 4, "the child inherited \(listed.count) descriptors")
        }
    }

    @Test func input_environment_andWorkingDirectory_reachTheChild() async throws {
        try await withDeadline(seconds: 30) {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("child-test-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let result = try await ChildProcess.run(
                "/bin/sh", ["-c", "pwd; echo \"$GREETING\"; cat; echo oops >&2; exit 3"],
                environment: ["GREETING": "hello", "PATH": "/usr/bin:/bin"], workingDirectory: folder.path,
                input: Data("from stdin\n".utf8))
            #expect(result.status == 3)
            let expectedFolder = folder.resolvingSymlinksInPath().path
            #expect(result.outputText == "\(expectedFolder)\nhello\nfrom stdin\n")
            #expect(result.errorText == "oops\n")
        }
    }

    /// CI, stop 62: a program a test had just copied failed to start with
    /// "Text file busy", because a child spawned meanwhile still held the
    /// copy's write descriptor. Here the descriptor is held on purpose and
    /// closed a moment later: the run waits for it instead of failing.
    @Test func aProgramStillOpenForWriting_startsOnceTheWriterCloses() async throws {
        try await withDeadline(seconds: 30) {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("child-test-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let program = folder.appendingPathComponent("program").path
            let writer = open(program, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
            try #require(writer >= 0)
            let script = Array("#!/bin/sh\necho started\n".utf8)
            try #require(write(writer, script, script.count) == script.count)
            let closing = Task {
                try await Task.sleep(nanoseconds: 300_000_000)
                close(writer)
            }
            let result = try await ChildProcess.run(program, [])
            try await closing.value
            #expect(result.status == 0)
            #expect(result.outputText == "started\n")
        }
    }

    @Test func aMissingProgram_throwsAnErrorThatNamesIt() async throws {
        let error = await #expect(throws: NSError.self) {
            _ = try await ChildProcess.run("/nonexistent/program", [])
        }
        #expect(error?.localizedDescription.contains("/nonexistent/program") == true)
    }
}
