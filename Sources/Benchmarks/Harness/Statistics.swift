// Order statistics over a handful of runs.
enum Statistics {
    /// The median; the mean of the two middle values for an even count; nil if empty.
    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
    }

    static func median(_ values: [Int]) -> Double? {
        median(values.map(Double.init))
    }

    /// Spread as (max - min) / median, for "how noisy was this cell".
    static func relativeSpread(_ values: [Double]) -> Double? {
        guard let median = median(values), median != 0, let low = values.min(), let high = values.max() else {
            return nil
        }
        return (high - low) / median
    }
}
