import AsyncURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackServer
import Testing

/// A plain session (no TLS challenges) that meets a certificate it cannot
/// verify fails with an error naming what is wrong: the root it lacks, the
/// names the certificate lists, the dates.
@Suite struct CertificateFailureMessageTests {
    private func failure(_ options: LoopbackServer.Options, trusting: Bool) async throws -> URLError? {
        try await withServer(options) { server in
            let configuration = testConfiguration(trusting: trusting ? server : nil)
            do {
                _ = try await Session(configuration: configuration).data(from: server.url("/bytes/1"))
                return nil
            } catch let error as URLError {
                return error
            }
        }
    }

    @Test func unknownRoot_namesTheRootToTrust() async throws {
        let error = try await failure(LoopbackServer.Options(tls: true, certificate: .issuedByTestCA), trusting: false)
        #expect(error?.code == .serverCertificateHasUnknownRoot || error?.code == .serverCertificateUntrusted)
        let text = error?.localizedDescription ?? ""
        #expect(text.contains("AsyncURLSession Test CA"), "\(text)")
        #expect(text.contains("tlsTrustRootsPEM"))
    }

    @Test func wrongHost_namesTheHostAndTheCertificatesNames() async throws {
        let error = try await failure(LoopbackServer.Options(tls: true, certificate: .wrongHost), trusting: true)
        #expect(error?.code == .serverCertificateUntrusted)
        let text = error?.localizedDescription ?? ""
        #expect(text.contains("127.0.0.1") && text.contains("DNS:example.invalid"), "\(text)")
    }

    @Test func expired_saysSo_andNamesTheCertificate() async throws {
        let error = try await failure(LoopbackServer.Options(tls: true, certificate: .expired), trusting: true)
        #expect(error?.code == .serverCertificateHasBadDate)
        let text = error?.localizedDescription ?? ""
        #expect(text.contains("expired") && text.contains("AsyncURLSession LoopbackServer"), "\(text)")
    }

    @Test func theNamingHandshake_isNotATransaction() async throws {
        try await withServer(LoopbackServer.Options(tls: true)) { server in
            let task = Session(configuration: testConfiguration()).dataTask(with: server.url("/bytes/1"))
            task.resume()
            let recorded = await record(task)
            #expect(recorded.error is URLError)
            #expect(recorded.metrics?.transactionMetrics.count == 1)
        }
    }
}
