import Testing

@testable import LoopbackServer

/// The Digest arithmetic and Authorization parsing, without a network.
@Suite struct DigestTests {
    @Test func responseMatchesRFCExamples() {
        // RFC 2617 section 3.5.
        #expect(
            Digest.response(
                user: "Mufasa", password: "Circle Of Life", realm: "testrealm@host.com", method: "GET",
                uri: "/dir/index.html", nonce: "dcd98b7102dd2f0e8b11d0f600bfb0c093", nc: "00000001", cnonce: "0a4f113b"
            ) == "6629fae49393a05397450978507c4ef1"
        )
        // RFC 7616 section 3.9.1, MD5.
        #expect(
            Digest.response(
                user: "Mufasa", password: "Circle of Life", realm: "http-auth@example.org", method: "GET",
                uri: "/dir/index.html", nonce: "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc: "00000001",
                cnonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"
            ) == "8ca523f5e9506fed4657c9700eebdbec"
        )
    }

    @Test func parametersParseTokensAndQuotedStrings() throws {
        let header = try #require(AuthorizationHeader(#"Digest  username="a \"b\"", nc=00000001 ,qop=auth,, uri="/x?y=1,2""#))
        #expect(header.hasScheme("digest"))
        let parameters = try #require(header.parameters)
        #expect(parameters == ["username": "a \"b\"", "nc": "00000001", "qop": "auth", "uri": "/x?y=1,2"])
    }

    @Test(arguments: [#",,,=""#, "Digest =x", #"Digest a="unterminated"#, "Digest a b"])
    func malformedParametersAreRefused(value: String) {
        #expect(AuthorizationHeader(value)?.parameters == nil)
    }

    @Test func onlyIssuedNoncesWithTheRightResponseVerify() throws {
        let state = AuthState()
        let other = AuthState()
        let nonce = state.makeNonce()
        #expect(state.isValidNonce(nonce))
        #expect(!other.isValidNonce(nonce), "another server's nonce")
        #expect(!state.isValidNonce(String(repeating: "0", count: 64)))

        func authorization(nonce: String, password: String) throws -> AuthorizationHeader {
            let response = Digest.response(
                user: "u", password: password, realm: "r", method: "GET", uri: "/auth/digest",
                nonce: nonce, nc: "00000001", cnonce: "c"
            )
            return try #require(AuthorizationHeader(
                #"Digest username="u", realm="r", nonce="\#(nonce)", uri="/auth/digest", qop=auth, nc=00000001, cnonce="c", response="\#(response)""#
            ))
        }
        func verify(_ header: AuthorizationHeader) -> Bool {
            Digest.verify(header, user: "u", password: "p", realm: "r", opaque: nil, method: "GET", uri: "/auth/digest", state: state)
        }
        #expect(verify(try authorization(nonce: nonce, password: "p")))
        #expect(!verify(try authorization(nonce: nonce, password: "q")))
        #expect(!verify(try authorization(nonce: other.makeNonce(), password: "p")))
    }
}
