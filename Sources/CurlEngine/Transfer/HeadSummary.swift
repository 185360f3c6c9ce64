/// The parts of a response head that decide a transfer's outcome.
struct HeadSummary {
    let statusCode: Int
    let contentLength: Int64?
    let hasContentEncoding: Bool

    init(_ head: borrowing ResponseHead) {
        statusCode = head.statusCode
        contentLength = head.contentLength
        hasContentEncoding = head.hasContentEncoding
    }
}
