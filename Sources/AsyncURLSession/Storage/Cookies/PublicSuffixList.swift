internal import CPSL

/// The Public Suffix List through libpsl (the list Debian keeps current in
/// its `publicsuffix` package, else the one built into libpsl), so a cookie
/// can never claim `com` or `co.uk` as its Domain. Loaded once; libpsl's
/// context is read-only after loading, so lookups from any thread are safe.
struct PublicSuffixList: Sendable {
    /// A stand-in for tests: these suffixes and nothing else.
    private let fixed: Set<String>?

    static let system = PublicSuffixList(fixed: nil)

    static func only(_ suffixes: Set<String>) -> PublicSuffixList {
        PublicSuffixList(fixed: suffixes)
    }

    /// Whether `domain` (lowercased, no leading dot) is a public suffix.
    /// Without any list (libpsl found none), every domain counts as one:
    /// cookies then stay host-only, which is safe.
    func isPublicSuffix(_ domain: String) -> Bool {
        if let fixed { return fixed.contains(domain) }
        guard let context = LoadedList.context else { return true }
        return psl_is_public_suffix2(context, domain, PSL_TYPE_ANY | PSL_TYPE_NO_STAR_RULE) != 0
    }
}

/// libpsl's context, made on first use.
private enum LoadedList {
    // nonisolated(unsafe): a raw pointer is not Sendable, but libpsl never
    // changes a context after loading it and its lookups only read it.
    nonisolated(unsafe) static let context: OpaquePointer? = {
        // The newer of the system's list file and libpsl's built-in one.
        if let latest = psl_latest(nil) { return latest }
        return psl_builtin()
    }()
}
