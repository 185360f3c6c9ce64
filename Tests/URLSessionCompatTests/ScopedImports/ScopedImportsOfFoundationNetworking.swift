// GENERATED from the toolchain's FoundationNetworking: one scoped import
// through URLSessionCompat of each of its public top-level declarations, as a
// library that moves over writes them. This file compiling is the test; the
// checks below say that each name is the declaration a library expects.
// `ScopedImportListTests` fails, and prints this list anew, when the
// toolchain's FoundationNetworking declares a name this list lacks.
// Only scoped imports here: an unscoped one would hide an ambiguity.
import class URLSessionCompat.CachedURLResponse
import class URLSessionCompat.HTTPCookie
import struct URLSessionCompat.HTTPCookiePropertyKey
import class URLSessionCompat.HTTPCookieStorage
import class URLSessionCompat.HTTPURLResponse
import class URLSessionCompat.NSMutableURLRequest
import var URLSessionCompat.NSURLAuthenticationMethodDefault
import var URLSessionCompat.NSURLAuthenticationMethodHTMLForm
import var URLSessionCompat.NSURLAuthenticationMethodHTTPBasic
import var URLSessionCompat.NSURLAuthenticationMethodHTTPDigest
import var URLSessionCompat.NSURLAuthenticationMethodNTLM
import var URLSessionCompat.NSURLAuthenticationMethodNegotiate
import var URLSessionCompat.NSURLCredentialStorageRemoveSynchronizableCredentials
import var URLSessionCompat.NSURLProtectionSpaceFTP
import var URLSessionCompat.NSURLProtectionSpaceFTPProxy
import var URLSessionCompat.NSURLProtectionSpaceHTTP
import var URLSessionCompat.NSURLProtectionSpaceHTTPProxy
import var URLSessionCompat.NSURLProtectionSpaceHTTPS
import var URLSessionCompat.NSURLProtectionSpaceHTTPSProxy
import var URLSessionCompat.NSURLProtectionSpaceSOCKSProxy
import class URLSessionCompat.NSURLRequest
import var URLSessionCompat.NSURLSessionTransferSizeUnknown
import class URLSessionCompat.URLAuthenticationChallenge
import protocol URLSessionCompat.URLAuthenticationChallengeSender
import class URLSessionCompat.URLCache
import class URLSessionCompat.URLCredential
import class URLSessionCompat.URLCredentialStorage
import class URLSessionCompat.URLProtectionSpace
import class URLSessionCompat.URLProtocol
import protocol URLSessionCompat.URLProtocolClient
import struct URLSessionCompat.URLRequest
import class URLSessionCompat.URLResponse
import class URLSessionCompat.URLSession
import class URLSessionCompat.URLSessionConfiguration
import protocol URLSessionCompat.URLSessionDataDelegate
import class URLSessionCompat.URLSessionDataTask
import protocol URLSessionCompat.URLSessionDelegate
import protocol URLSessionCompat.URLSessionDownloadDelegate
import class URLSessionCompat.URLSessionDownloadTask
import var URLSessionCompat.URLSessionDownloadTaskResumeData
import protocol URLSessionCompat.URLSessionStreamDelegate
import class URLSessionCompat.URLSessionStreamTask
import class URLSessionCompat.URLSessionTask
import protocol URLSessionCompat.URLSessionTaskDelegate
import class URLSessionCompat.URLSessionTaskMetrics
import class URLSessionCompat.URLSessionTaskTransactionMetrics
import class URLSessionCompat.URLSessionUploadTask
import protocol URLSessionCompat.URLSessionWebSocketDelegate
import class URLSessionCompat.URLSessionWebSocketTask
import enum URLSessionCompat.tls_ciphersuite_t
import enum URLSessionCompat.tls_protocol_version_t

import Testing

@Suite struct ScopedImportTests {
    @Test func scopedImports_ofFoundationNetworkingsClasses_nameItsTypes() {
        #expect(String(reflecting: URLResponse.self) == "FoundationNetworking.URLResponse")
        #expect(String(reflecting: HTTPURLResponse.self) == "FoundationNetworking.HTTPURLResponse")
        #expect(String(reflecting: CachedURLResponse.self) == "FoundationNetworking.CachedURLResponse")
        #expect(String(reflecting: HTTPCookie.self) == "FoundationNetworking.HTTPCookie")
        #expect(String(reflecting: URLCredential.self) == "FoundationNetworking.URLCredential")
        #expect(String(reflecting: URLProtectionSpace.self) == "FoundationNetworking.URLProtectionSpace")
        #expect(String(reflecting: URLAuthenticationChallenge.self) == "FoundationNetworking.URLAuthenticationChallenge")
        #expect(String(reflecting: URLRequest.self) == "FoundationNetworking.URLRequest")
        #expect(String(reflecting: NSURLRequest.self) == "FoundationNetworking.NSURLRequest")
        #expect(String(reflecting: HTTPCookiePropertyKey.self) == "FoundationNetworking.HTTPCookiePropertyKey")
    }

    @Test func scopedImports_ofTheClassicAPI_nameTheAdaptersTypes() {
        #expect(String(reflecting: URLSession.self) == "URLSessionCompat.URLSession")
        #expect(String(reflecting: URLSessionConfiguration.self) == "URLSessionCompat.URLSessionConfiguration")
        #expect(String(reflecting: URLSessionTask.self) == "URLSessionCompat.URLSessionTask")
        #expect(String(reflecting: URLSessionDataTask.self) == "URLSessionCompat.URLSessionDataTask")
        #expect(String(reflecting: URLSessionUploadTask.self) == "URLSessionCompat.URLSessionUploadTask")
        #expect(String(reflecting: URLSessionDownloadTask.self) == "URLSessionCompat.URLSessionDownloadTask")
        #expect(String(reflecting: URLSessionStreamTask.self) == "URLSessionCompat.URLSessionStreamTask")
        #expect(String(reflecting: URLSessionWebSocketTask.self) == "URLSessionCompat.URLSessionWebSocketTask")
        #expect(String(reflecting: URLSessionTaskMetrics.self) == "URLSessionCompat.URLSessionTaskMetrics")
        #expect(String(reflecting: URLProtocol.self) == "URLSessionCompat.URLProtocol")
        #expect(String(reflecting: URLCache.self) == "URLSessionCompat.URLCache")
        #expect(String(reflecting: HTTPCookieStorage.self) == "URLSessionCompat.HTTPCookieStorage")
        #expect(String(reflecting: URLCredentialStorage.self) == "URLSessionCompat.URLCredentialStorage")
        #expect(String(reflecting: (any URLSessionDataDelegate).self) == "URLSessionCompat.URLSessionDataDelegate")
        #expect(String(reflecting: (any URLProtocolClient).self) == "URLSessionCompat.URLProtocolClient")
    }

    @Test func scopedImports_ofConstants_keepTheirValues() {
        #expect(NSURLAuthenticationMethodHTTPBasic == "NSURLAuthenticationMethodHTTPBasic")
        #expect(NSURLSessionTransferSizeUnknown == -1)
        #expect(tls_protocol_version_t.TLSv12.rawValue == 0x0303)
    }
}
