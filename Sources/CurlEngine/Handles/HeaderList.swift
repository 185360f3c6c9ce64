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
        let line = value.isEmpty ? "\(name);" : "\(name): \(value)"
        return append(line: line)
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
