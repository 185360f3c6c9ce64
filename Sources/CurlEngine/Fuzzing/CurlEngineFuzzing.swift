import Foundation

/// The response head parser, for the fuzz harness (`Sources/fuzz-parsers`).
/// `package`: only this package's targets see it.
package enum CurlEngineFuzzing {
    /// Feeds `bytes` to a `ResponseHeadParser` as libcurl's header callback
    /// would (one call per line, LF included), and reads every head it
    /// hands out through the accessors the core uses.
    package static func responseHeads(_ bytes: UnsafeRawBufferPointer) {
        var parser = ResponseHeadParser()
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
            end = min(end + 1, bytes.count)
            if let head = parser.consume(UnsafeRawBufferPointer(rebasing: bytes[start..<end])) {
                inspect(head)
            }
            start = end
        }
    }

    private static func inspect(_ head: ResponseHead) {
        var total = 0
        for index in head.fields.indices {
            total &+= head.fields.name(at: index).utf8.count &+ head.fields.value(at: index).utf8.count
            _ = head.fields.firstIndex(sameNameAs: index)
        }
        _ = head.fields.value(named: "Content-Type")
        _ = head.fields.values(named: "Set-Cookie")
        _ = head.fields.count(named: "Content-Length")
        precondition(total >= 0 && head.statusCode >= 0)
    }
}
