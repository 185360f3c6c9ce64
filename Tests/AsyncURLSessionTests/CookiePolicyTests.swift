import Foundation
import Testing

@testable import AsyncURLSession

/// The cookie rules on their own (RFC 6265bis), without a server: parsing,
/// what a response may store, what a request sends.
@Suite struct CookiePolicyTests {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)
    private let policy = CookiePolicy(publicSuffixes: .system)

    private func verdict(_ header: String, from url: String) -> CookiePolicy.Verdict? {
        guard let parsed = ParsedSetCookie.parse(header) else { return nil }
        return policy.evaluate(parsed, from: URL(string: url)!, now: now)
    }

    private func stored(_ header: String, from url: String) -> StoredCookie? {
        if case .store(let cookie)? = verdict(header, from: url) { return cookie }
        return nil
    }

    @Test func parse_readsTheAttributes_lastOneWinning() throws {
        let cookie = try #require(ParsedSetCookie.parse(
            " id = a b ; Path=/x; path=/y; Secure; HttpOnly; SameSite=lax; Domain=.Example.COM; Unknown=1"))
        #expect(cookie.name == "id")
        #expect(cookie.value == "a b")
        #expect(cookie.path == "/y")
        #expect(cookie.secure && cookie.httpOnly)
        #expect(cookie.sameSite == "Lax")
        #expect(cookie.domain == "example.com")
        #expect(ParsedSetCookie.parse("a=1\u{0}b") == nil, "a control character drops the whole cookie")
        #expect(ParsedSetCookie.parse("=") == nil)
        #expect(ParsedSetCookie.parse("a=1; Path=relative")?.path == nil)
    }

    @Test(arguments: [
        "Wed, 09 Jun 2021 10:18:14 GMT", "Wednesday, 09-Jun-21 10:18:14 GMT", "Wed Jun  9 10:18:14 2021",
        "09 Jun 2021 10:18:14", "Wed, 09-Jun-2021 10:18:14 UTC",
    ])
    func cookieDate_readsTheFormatsServersSend(text: String) {
        #expect(CookieDate.parse(text) == Date(timeIntervalSince1970: 1_623_233_894))
    }

    @Test func cookieDate_refusesWhatIsNoDate() {
        #expect(CookieDate.parse("tomorrow") == nil)
        #expect(CookieDate.parse("Wed, 32 Jun 2021 10:18:14 GMT") == nil)
        #expect(CookieDate.parse("Wed, 09 Jun 2021 25:18:14 GMT") == nil)
    }

    @Test(arguments: [("com", "www.example.com"), ("co.uk", "shop.example.co.uk"), ("github.io", "project.github.io")])
    func publicSuffix_isRefusedAsDomain(suffix: String, host: String) {
        guard case .reject? = verdict("a=1; Domain=\(suffix)", from: "https://\(host)/") else {
            Issue.record("Domain=\(suffix) was accepted for \(host)")
            return
        }
    }

    @Test func publicSuffixHost_mayNameItselfAsHostOnly() {
        let cookie = stored("a=1; Domain=co.uk", from: "https://co.uk/")
        #expect(cookie?.hostOnly == true)
    }

    @Test func domainThatDoesNotMatchTheHost_isRefused() {
        guard case .reject? = verdict("a=1; Domain=other.example", from: "https://www.example.org/") else {
            Issue.record("a foreign Domain was accepted")
            return
        }
        guard case .reject? = verdict("a=1; Domain=ample.org", from: "https://www.example.org/") else {
            Issue.record("a Domain that is only a string suffix was accepted")
            return
        }
    }

    @Test func domainCookie_reachesSubdomains_hostOnlyDoesNot() throws {
        let domain = try #require(stored("a=1; Domain=example.org", from: "https://www.example.org/"))
        let hostOnly = try #require(stored("b=2", from: "https://www.example.org/"))
        #expect(!domain.hostOnly && hostOnly.hostOnly)
        #expect(CookiePolicy.matches(domain, url: URL(string: "https://api.example.org/")!, now: now))
        #expect(!CookiePolicy.matches(hostOnly, url: URL(string: "https://api.example.org/")!, now: now))
        #expect(CookiePolicy.matches(hostOnly, url: URL(string: "https://www.example.org/x")!, now: now))
    }

    @Test func path_defaultsToTheDirectory_andMatchesOnBoundaries() throws {
        let cookie = try #require(stored("a=1", from: "https://example.org/a/page"))
        #expect(cookie.path == "/a")
        #expect(CookiePolicy.matches(cookie, url: URL(string: "https://example.org/a")!, now: now))
        #expect(CookiePolicy.matches(cookie, url: URL(string: "https://example.org/a/b")!, now: now))
        #expect(!CookiePolicy.matches(cookie, url: URL(string: "https://example.org/ab")!, now: now))
        #expect(!CookiePolicy.matches(cookie, url: URL(string: "https://example.org/")!, now: now))
        #expect(stored("a=1", from: "https://example.org/page")?.path == "/")
    }

    @Test func secure_isNotSettableFromHTTP_andOnlySentOverHTTPS() throws {
        guard case .reject? = verdict("a=1; Secure", from: "http://example.org/") else {
            Issue.record("a Secure cookie was set over http")
            return
        }
        let cookie = try #require(stored("a=1; Secure", from: "https://example.org/"))
        #expect(CookiePolicy.matches(cookie, url: URL(string: "https://example.org/")!, now: now))
        #expect(!CookiePolicy.matches(cookie, url: URL(string: "http://example.org/")!, now: now))
    }

    @Test func httpOnlyAndSameSite_areKept() throws {
        let cookie = try #require(stored("a=1; HttpOnly; SameSite=Strict", from: "https://example.org/"))
        #expect(cookie.httpOnly)
        #expect(cookie.sameSite == "Strict")
        #expect(cookie.httpCookie?.isHTTPOnly == true)
    }

    @Test func maxAgeZeroAndPastExpires_delete_andMaxAgeWinsOverExpires() throws {
        guard case .delete? = verdict("a=1; Max-Age=0", from: "https://example.org/") else {
            Issue.record("Max-Age=0 did not delete"); return
        }
        guard case .delete? = verdict("a=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT", from: "https://example.org/") else {
            Issue.record("a past Expires did not delete"); return
        }
        let cookie = try #require(stored("a=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=60", from: "https://example.org/"))
        #expect(cookie.expires == now.addingTimeInterval(60))
    }

    @Test func prefixes_requireWhatTheyPromise() {
        if case .store? = verdict("__Secure-a=1", from: "https://example.org/") { Issue.record("__Secure- without Secure") }
        if case .store? = verdict("__Host-a=1; Secure; Path=/; Domain=example.org", from: "https://example.org/") {
            Issue.record("__Host- with a Domain")
        }
        #expect(stored("__Host-a=1; Secure; Path=/", from: "https://example.org/") != nil)
    }

    @Test func header_putsLongerPathsFirst() throws {
        let short = try #require(stored("a=1; Path=/", from: "https://example.org/"))
        var long = try #require(stored("b=2; Path=/x", from: "https://example.org/"))
        long.created = short.created.addingTimeInterval(1)
        #expect(CookiePolicy.header(for: [short, long]) == "b=2; a=1")
    }

    @Test func jar_keepsAtMostFiftyCookiesPerDomain_droppingTheOldest() {
        let jar = CookieJar(publicSuffixes: .system)
        let url = URL(string: "https://example.org/")!
        for index in 0..<60 { jar.storeCookies(fromSetCookieFields: ["c\(index)=\(index)"], for: url) }
        let names = Set(jar.cookies(for: url).map(\.name))
        #expect(names.count == CookieJar.maximumPerDomain)
        #expect(names.contains("c59") && !names.contains("c0"))
    }

    @Test func jar_refusesAnHTTPCookieThatWouldReplaceASecureOne() {
        let jar = CookieJar(publicSuffixes: .system)
        jar.storeCookies(fromSetCookieFields: ["id=secret; Secure"], for: URL(string: "https://example.org/")!)
        jar.storeCookies(fromSetCookieFields: ["id=forged"], for: URL(string: "http://example.org/")!)
        #expect(jar.cookies(for: URL(string: "https://example.org/")!).map(\.value) == ["secret"])
    }

    @Test func jar_acceptPolicies() {
        let url = URL(string: "https://api.example.org/")!
        let never = CookieJar(publicSuffixes: .system)
        never.acceptPolicy = .never
        #expect(never.storeCookies(fromSetCookieFields: ["a=1"], for: url) == 0)
        let main = CookieJar(publicSuffixes: .system)
        main.acceptPolicy = .onlyFromMainDocumentDomain
        #expect(main.storeCookies(fromSetCookieFields: ["a=1"], for: url, mainDocumentURL: URL(string: "https://other.net/")!) == 0)
        #expect(main.storeCookies(fromSetCookieFields: ["a=1"], for: url, mainDocumentURL: URL(string: "https://api.example.org/")!) == 1)
    }
}
