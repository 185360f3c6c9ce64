internal import CCurl

/// An owned `curl_slist` of request header lines. libcurl does not copy the
/// list: it must stay alive until the transfer is removed from its multi handle.
struct HeaderList: ~Copyable {
    private(set) var raw: UnsafeMutablePointer<curl_slist>?

    init() { raw = nil }

    /// Appends "Name: value", or "Name;" for an empty value (libcurl's syntax
    /// for sending an empty header), or "Name:" to suppress a built-in header.
    /// Returns false when libcurl could not allocate.
    mutating func append(name: String, value: String) -> Bool {
        // Composed in a temporary (stack) buffer: a String per line was an
        // allocation per header per request. libcurl copies the line.
        var name = name
        var value = value
        let list = raw
        let next = name.withUTF8 { name in
            value.withUTF8 { value in
                let length = name.count + (value.isEmpty ? 1 : 2 + value.count)
                return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length + 1) { line in
                    var end = line.initialize(fromContentsOf: name)
                    if value.isEmpty {
                        line[end] = UInt8(ascii: ";")
                        end += 1
                    } else {
                        line[end] = UInt8(ascii: ":")
                        line[end + 1] = UInt8(ascii: " ")
                        end = UnsafeMutableBufferPointer(rebasing: line[(end + 2)...]).initialize(fromContentsOf: value)
                            + end + 2
                    }
                    line[end] = 0
                    return line.withMemoryRebound(to: CChar.self) { curl_slist_append(list, $0.baseAddress) }
                }
            }
        }
        guard let next else { return false }
        raw = next
        return true
    }

    /// Suppresses a header libcurl would add on its own (e.g. "Expect").
    mutating func suppress(_ name: String) -> Bool {
        append(line: "\(name):")
    }

    private mutating func append(line: String) -> Bool {
        guard let next = line.withCString({ curl_slist_append(raw, $0) }) else { return false }
        raw = next
        return true
    }

    deinit {
        if let raw { curl_slist_free_all(raw) }
    }
}
