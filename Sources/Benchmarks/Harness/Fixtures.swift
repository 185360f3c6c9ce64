// The files nginx serves. Small ones are written with a repeated byte pattern;
// the 256 MiB and 1 GiB files are sparse (ftruncate): created instantly, no
// disk used, read back as zeros — the transfer cost is the same for a client.
#if canImport(Glibc)
import Glibc
#endif
import Foundation

enum Fixture: String, CaseIterable, Sendable {
    case kib1 = "files/1k.bin"
    case mib1 = "files/1m.bin"
    case mib256 = "files/256m.bin"
    case gib1 = "files/1g.bin"
    /// Slow drip (W7): 4,000 bytes at 1 KiB/s, about 4 s. (Not 4096: with
    /// sendfile, nginx 1.22 sends page-aligned sizes faster than limit_rate.)
    case drip4000 = "drip/4000.bin"
    /// Shorter drip for --quick (about 1 s).
    case drip1000 = "drip/1000.bin"

    var size: Int {
        switch self {
        case .kib1: 1024
        case .mib1: 1 << 20
        case .mib256: 256 << 20
        case .gib1: 1 << 30
        case .drip4000: 4_000
        case .drip1000: 1_000
        }
    }

    var urlPath: String { "/" + rawValue }

    /// The nginx location of the files under `files/`.
    static let filesLocation = "/files/"

    private var isSparse: Bool { size >= 256 << 20 }

    func create(under www: String) throws {
        let path = www + "/" + rawValue
        if isSparse {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard fd >= 0 else { throw HarnessError.setup("cannot create \(path)") }
            defer { close(fd) }
            guard ftruncate(fd, off_t(size)) == 0 else { throw HarnessError.setup("ftruncate \(path) failed") }
        } else {
            let pattern = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            try Data(pattern).write(to: URL(fileURLWithPath: path))
            chmod(path, 0o644)
        }
    }

    static func createAll(under www: String) throws {
        for fixture in allCases { try fixture.create(under: www) }
    }
}
