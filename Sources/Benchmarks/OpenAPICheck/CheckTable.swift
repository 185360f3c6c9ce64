// The checks as a Markdown table (one row per check, one column per
import BenchOpenAPIShared
// transport), then each cell's detail, so the README can quote it as is.
enum CheckTable {
    static func render(names: [String], transports: [String], columns: [[OpenAPICheckResult]]) -> String {
        var lines: [String] = []
        lines.append("| check | " + transports.joined(separator: " | ") + " |")
        lines.append("|---|" + transports.map { _ in "---|" }.joined())
        for (row, name) in names.enumerated() {
            let cells = columns.map { $0.indices.contains(row) ? ($0[row].passed ? "yes" : "**no**") : "-" }
            lines.append("| \(name) | " + cells.joined(separator: " | ") + " |")
        }
        lines.append("")
        for (column, transport) in transports.enumerated() {
            lines.append("\(transport):")
            for result in columns[column] {
                lines.append("  - \(result.passed ? "pass" : "FAIL") \(result.name): \(result.detail)")
            }
        }
        return lines.joined(separator: "\n")
    }
}
