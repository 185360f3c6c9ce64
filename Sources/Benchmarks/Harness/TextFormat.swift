// Number formatting and column alignment for the text tables.
import Foundation

enum TextFormat {
    /// 12345.6 -> "12,346"; smaller values keep decimals ("34.5", "3.42", "0.051").
    static func number(_ value: Double?, decimals: Int? = nil) -> String {
        guard let value, value.isFinite else { return "-" }
        let magnitude = abs(value)
        let places = decimals ?? (magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : magnitude >= 1 ? 2 : 3)
        let plain = String(format: "%.\(places)f", magnitude)
        let parts = plain.split(separator: ".", maxSplits: 1)
        var digits = Array(parts[0])
        var grouped = ""
        while digits.count > 3 {
            grouped = "," + String(digits.suffix(3)) + grouped
            digits.removeLast(3)
        }
        grouped = String(digits) + grouped
        if parts.count == 2 { grouped += "." + parts[1] }
        return (value < 0 ? "-" : "") + grouped
    }

    static func ratio(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "-" }
        return String(format: "%.2fx", value)
    }

    /// Renders rows as left-aligned first column, right-aligned others.
    static func table(header: [String], rows: [[String]]) -> String {
        let columns = header.count
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.prefix(columns).enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        func render(_ row: [String]) -> String {
            row.prefix(columns).enumerated().map { index, cell in
                let pad = String(repeating: " ", count: widths[index] - cell.count)
                return index == 0 ? cell + pad : pad + cell
            }.joined(separator: "  ")
        }
        let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
        return ([render(header), rule] + rows.map(render)).joined(separator: "\n")
    }
}
