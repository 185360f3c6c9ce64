import Crypto

/// RFC 7616 Digest authentication, the subset libcurl speaks by default: algorithm MD5 with
/// qop "auth" (no MD5-sess, no auth-int, no SHA-256, no userhash).
enum Digest {
    /// The WWW-Authenticate value of a challenge with a fresh nonce.
    static func challenge(realm: String, opaque: String?, state: AuthState) -> String {
        var value = "Digest realm=\(AuthorizationHeader.quoted(realm)), qop=\"auth\", nonce=\"\(state.makeNonce())\""
        if let opaque {
            value += ", opaque=\"\(opaque)\""
        }
        return value + ", algorithm=MD5"
    }

    /// Whether `authorization` is a correct Digest answer for this user, realm and request.
    /// `opaque` is what the challenge carried (nil: it had none, so none is checked).
    static func verify(
        _ authorization: AuthorizationHeader,
        user: String,
        password: String,
        realm: String,
        opaque: String?,
        method: String,
        uri: String,
        state: AuthState
    ) -> Bool {
        guard authorization.hasScheme("Digest"), let parameters = authorization.parameters,
            parameters["username"] == user,
            parameters["realm"] == realm,
            parameters["uri"] == uri,
            parameters["qop"]?.lowercased() == "auth",
            (parameters["algorithm"] ?? "MD5").uppercased() == "MD5",
            opaque == nil || parameters["opaque"] == opaque,
            let nonce = parameters["nonce"], state.isValidNonce(nonce),
            let nc = parameters["nc"], let cnonce = parameters["cnonce"],
            let response = parameters["response"]
        else { return false }
        let expected = self.response(
            user: user, password: password, realm: realm, method: method, uri: uri,
            nonce: nonce, nc: nc, cnonce: cnonce
        )
        return response.lowercased() == expected
    }

    /// MD5(HA1:nonce:nc:cnonce:auth:HA2) in hex, HA1 = MD5(user:realm:password),
    /// HA2 = MD5(method:uri).
    static func response(
        user: String,
        password: String,
        realm: String,
        method: String,
        uri: String,
        nonce: String,
        nc: String,
        cnonce: String
    ) -> String {
        let ha1 = md5Hex("\(user):\(realm):\(password)")
        let ha2 = md5Hex("\(method):\(uri)")
        return md5Hex("\(ha1):\(nonce):\(nc):\(cnonce):auth:\(ha2)")
    }

    static func md5Hex(_ text: String) -> String {
        Hex.string(Insecure.MD5.hash(data: Array(text.utf8)))
    }
}
