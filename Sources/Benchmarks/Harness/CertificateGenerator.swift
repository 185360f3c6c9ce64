// A throwaway CA and a server certificate for 127.0.0.1, made with the openssl
// CLI at start (EC P-256; valid two days). The clients trust the CA's PEM; a
// leaf signed by a CA (rather than one self-signed leaf) is accepted by every
// TLS stack in the comparison (OpenSSL under libcurl, BoringSSL under NIOSSL).
import Foundation

struct GeneratedCertificates {
    /// The CA certificate clients are told to trust.
    let caCertificate: String
    let serverCertificate: String
    let serverKey: String
}

enum CertificateGenerator {
    static func generate(in folder: String) throws -> GeneratedCertificates {
        guard let openssl = ChildProcess.locate("openssl") else {
            throw HarnessError.setup("the openssl command was not found")
        }
        let caKey = folder + "/ca.key"
        let caCert = folder + "/ca.pem"
        let serverKey = folder + "/server.key"
        let serverRequest = folder + "/server.csr"
        let serverCert = folder + "/server.pem"
        let extensions = folder + "/server.ext"
        try """
        basicConstraints=critical,CA:FALSE
        keyUsage=critical,digitalSignature
        extendedKeyUsage=serverAuth
        subjectAltName=IP:127.0.0.1,DNS:localhost

        """.write(toFile: extensions, atomically: true, encoding: .utf8)

        let ecKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        let steps: [[String]] = [
            ["req", "-x509"] + ecKey + [
                "-keyout", caKey, "-out", caCert, "-days", "2", "-subj", "/CN=AsyncURLSession benchmark CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ],
            ["req"] + ecKey + ["-keyout", serverKey, "-out", serverRequest, "-subj", "/CN=127.0.0.1"],
            [
                "x509", "-req", "-in", serverRequest, "-CA", caCert, "-CAkey", caKey, "-CAcreateserial",
                "-out", serverCert, "-days", "2", "-extfile", extensions,
            ],
        ]
        for step in steps {
            let (exit, output) = try ChildProcess.run(openssl, step, scratchDirectory: folder)
            guard exit.succeeded else {
                throw HarnessError.setup("openssl \(step[0]) failed (\(exit.description)): \(output)")
            }
        }
        return GeneratedCertificates(caCertificate: caCert, serverCertificate: serverCert, serverKey: serverKey)
    }
}
