// What the numbers were measured on, printed at the top and kept in the JSON.
#if canImport(Glibc)
import Glibc
#endif
import Foundation

struct MachineInfo: Codable, Sendable {
    var processors: Int
    var cpuModel: String
    var memoryGiB: Double
    var kernel: String
    var libcurl: String
    var nginx: String
    /// 1-minute load average when the run started and ended: other work on the
    /// machine (a build, say) makes the numbers noisy.
    var loadAverageAtStart: Double
    var loadAverageAtEnd: Double?

    enum CodingKeys: String, CodingKey {
        case processors
        case cpuModel = "cpu_model"
        case memoryGiB = "memory_gib"
        case kernel, libcurl, nginx
        case loadAverageAtStart = "load_average_start"
        case loadAverageAtEnd = "load_average_end"
    }

    static func collect(libcurl: String, nginx: String) -> MachineInfo {
        var system = utsname()
        uname(&system)
        let kernel = withUnsafeBytes(of: system.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
        return MachineInfo(
            processors: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))),
            cpuModel: model,
            memoryGiB: Double(ProcessInfo.processInfo.physicalMemory) / Double(1 << 30),
            kernel: kernel,
            libcurl: libcurl,
            nginx: nginx,
            loadAverageAtStart: loadAverage()
        )
    }

    static func loadAverage() -> Double {
        var loads = [Double](repeating: 0, count: 3)
        return getloadavg(&loads, 3) > 0 ? loads[0] : -1
    }

    var summary: String {
        """
        Machine: \(processors) CPUs (\(cpuModel)), \(TextFormat.number(memoryGiB, decimals: 1)) GiB, Linux \(kernel)
        libcurl: \(libcurl)
        nginx:   \(nginx)
        Load average (1 min) at start: \(TextFormat.number(loadAverageAtStart, decimals: 2))
        """
    }
}
