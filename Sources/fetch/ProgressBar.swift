import Foundation

/// A one-line progress bar on standard error, redrawn at most ten times a
/// second. When standard error is not a terminal it prints only the final line.
struct ProgressBar {
    private let isTerminal = isatty(STDERR_FILENO) != 0
    private var lastDraw: UInt64 = 0
    private let started = DispatchTime.now().uptimeNanoseconds
    private let label: String

    init(label: String) {
        self.label = label
    }

    mutating func update(received: Int64, expected: Int64) {
        guard isTerminal else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        guard now - lastDraw >= 100_000_000 else { return }
        lastDraw = now
        draw(received: received, expected: expected, final: false)
    }

    func finish(received: Int64, expected: Int64) {
        draw(received: received, expected: expected, final: true)
    }

    private func draw(received: Int64, expected: Int64, final: Bool) {
        let seconds = max(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9, 0.001)
        let rate = Double(received) / seconds
        var line = "\(label) "
        if expected > 0 {
            let fraction = min(1, Double(received) / Double(expected))
            let width = 30
            let filled = Int(fraction * Double(width))
            line += "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
            line += String(format: "%3.0f%% ", fraction * 100)
        }
        line += "\(Self.bytes(Double(received)))"
        if expected > 0 { line += " / \(Self.bytes(Double(expected)))" }
        line += "  \(Self.bytes(rate))/s"
        let prefix = isTerminal ? "\r\u{1B}[K" : ""
        fflush(nil)  // flush stdout first: keeps the order of lines when both streams go to one place
        FileHandle.standardError.write(Data((prefix + line + (final ? "\n" : "")).utf8))
    }

    static func bytes(_ count: Double) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = count
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(Int(value)) B" : String(format: "%.1f %@", value, units[unit])
    }
}
