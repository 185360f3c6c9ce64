import AgentWire
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The agent's per-user folder: made private, and refused when it is not
/// ours to use.
@Suite struct AgentFolderTests {
    private func scratch() throws -> URL {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("agent-folder-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        return parent
    }

    @Test func runtimeDirectory_isUsed_whenSet_else_aPerUserFolderInTmp() {
        let runtime = AgentFolder.forCurrentUser(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"])
        #expect(runtime.url.path == "/run/user/1000/AsyncURLSession")
        #expect(runtime.socketPath == "/run/user/1000/AsyncURLSession/agent.sock")
        let fallback = AgentFolder.forCurrentUser(environment: ["XDG_RUNTIME_DIR": "relative/ignored"])
        #expect(fallback.url.path == "/tmp/AsyncURLSession-\(getuid())")
    }

    @Test func prepare_makesTheFolder0700() throws {
        let parent = try scratch()
        defer { try? FileManager.default.removeItem(at: parent) }
        let folder = AgentFolder(url: parent.appendingPathComponent("AsyncURLSession"))
        try folder.prepare()
        var info = stat()
        #expect(stat(folder.url.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        try folder.prepare()  // again: already there, still fine
    }

    @Test func aFolderOthersCanEnter_isRefused_notRepaired() throws {
        let parent = try scratch()
        defer { try? FileManager.default.removeItem(at: parent) }
        let url = parent.appendingPathComponent("AsyncURLSession")
        try #require(mkdir(url.path, 0o700) == 0)
        try #require(chmod(url.path, 0o755) == 0)
        let error = #expect(throws: AgentWireError.self) { try AgentFolder(url: url).prepare() }
        #expect(error?.description.contains("open to other users") == true)
        var info = stat()
        #expect(stat(url.path, &info) == 0 && info.st_mode & 0o777 == 0o755)
    }

    @Test func aLinkInPlaceOfTheFolder_isRefused() throws {
        let parent = try scratch()
        defer { try? FileManager.default.removeItem(at: parent) }
        let target = parent.appendingPathComponent("elsewhere")
        try #require(mkdir(target.path, 0o700) == 0)
        let url = parent.appendingPathComponent("AsyncURLSession")
        try #require(symlink(target.path, url.path) == 0)
        let error = #expect(throws: AgentWireError.self) { try AgentFolder(url: url).prepare() }
        #expect(error?.description.contains("not a directory") == true)
    }
}

/// SO_PEERCRED, on a real pair of connected Unix sockets.
@Suite struct PeerCredentialsTests {
    @Test func thePeerOfAConnectedSocket_isThisProcess() throws {
        var pair: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        defer { pair.forEach { close($0) } }
        let peer = try PeerCredentials.of(socket: pair[0])
        #expect(peer.processID == getpid())
        #expect(peer.userID == getuid())
        #expect(peer.groupID == getgid())
        try peer.requireUser()
    }

    /// The refusal itself (running the test as two users needs root): a
    /// peer whose credentials name another user is refused, saying who.
    @Test func aPeerOfAnotherUser_isRefused_sayingWho() {
        let stranger = PeerCredentials(processID: 4242, userID: getuid() &+ 1, groupID: getgid())
        let error = #expect(throws: AgentWireError.self) { try stranger.requireUser() }
        #expect(error?.description.contains("process 4242 of user \(getuid() &+ 1)") == true)
    }

    @Test func aSocketThatIsNotConnected_hasNoPeer() {
        let lonely = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(lonely) }
        // Linux answers an unconnected socket with the "no one" credentials
        // (pid 0, uid -1): never this user.
        let peer = try? PeerCredentials.of(socket: lonely)
        #expect(peer == nil || (try? peer?.requireUser()) == nil)
    }
}

/// The length-prefixed framing between programs and the agent.
@Suite struct AgentFrameTests {
    @Test func messagesSplitAnywhere_comeOutWhole_inOrder() throws {
        let messages = [Data("{}".utf8), Data(), Data(repeating: 0x41, count: 70_000), Data("{\"k\":1}".utf8)]
        var stream = Data()
        for message in messages { stream.append(try AgentFrameEncoder.frame(message)) }
        for chunkSize in [1, 3, 4, 5, 4096, stream.count] {
            var decoder = AgentFrameDecoder()
            var decoded: [Data] = []
            var offset = 0
            while offset < stream.count {
                let end = min(offset + chunkSize, stream.count)
                decoder.append(stream.subdata(in: offset..<end))
                offset = end
                while let message = try decoder.next() { decoded.append(message) }
            }
            #expect(decoded == messages, "chunks of \(chunkSize)")
            #expect(decoder.pendingCount == 0)
        }
    }

    @Test func aLengthOverTheLimit_isAnError_beforeAnyBuffering() {
        var decoder = AgentFrameDecoder(maximumLength: 1024)
        decoder.append(Data([0x00, 0x00, 0x04, 0x01]))
        let error = #expect(throws: AgentWireError.self) { _ = try decoder.next() }
        #expect(error?.description.contains("over the limit") == true)
    }

    @Test func theLength_isFourBytesBigEndian() throws {
        let framed = try AgentFrameEncoder.frame(Data(repeating: 7, count: 0x010203))
        #expect(Array(framed.prefix(4)) == [0x00, 0x01, 0x02, 0x03])
        #expect(framed.count == 4 + 0x010203)
    }
}

/// The agent protocol's fuzz corpus (Tests/FuzzCorpus/agent-frames, the
/// seeds `.ci/fuzz` starts from): every input through the frame decoder and
/// the message decoders without a crash, and the well-formed seeds decode.
@Suite struct AgentFrameCorpusTests {
    private static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("FuzzCorpus/agent-frames")

    @Test func everySeed_passesThroughTheDecoders() throws {
        let seeds = try FileManager.default.contentsOfDirectory(at: Self.corpus, includingPropertiesForKeys: nil)
        #expect(seeds.count >= 5)
        for seed in seeds { AgentWireFuzzing.frames(try Data(contentsOf: seed)) }
    }

    @Test func theWellFormedSeeds_decodeAsMessages() throws {
        var decoder = AgentFrameDecoder()
        decoder.append(try Data(contentsOf: Self.corpus.appendingPathComponent("start-download")))
        let request = try JSONDecoder().decode(AgentRequest.self, from: try #require(try decoder.next()))
        guard case .startDownload(let session, let task, let described, let destination) = request else {
            Issue.record("decoded as \(request)")
            return
        }
        #expect(session == "fetch" && task == 7 && described.url == "http://127.0.0.1:8080/f" && destination == "/tmp/f")
        decoder.append(try Data(contentsOf: Self.corpus.appendingPathComponent("status-reply")))
        let reply = try JSONDecoder().decode(AgentReply.self, from: try #require(try decoder.next()))
        guard case .status(let agent, let transfers) = reply else {
            Issue.record("decoded as \(reply)")
            return
        }
        #expect(agent == 42 && transfers.first?.bytesOnDisk == 1_048_576 && transfers.first?.file == nil)
    }
}
