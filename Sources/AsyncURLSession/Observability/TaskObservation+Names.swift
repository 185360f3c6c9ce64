import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Instrumentation

extension TaskObservation {
    /// A `URLError.Code`'s name (`timedOut`), for `error.type` and the
    /// metrics' `error.type`; the raw value for a code without one here.
    static func name(of code: URLError.Code) -> String {
        switch code {
        case .cancelled: "cancelled"
        case .timedOut: "timedOut"
        case .badURL: "badURL"
        case .unsupportedURL: "unsupportedURL"
        case .cannotFindHost: "cannotFindHost"
        case .cannotConnectToHost: "cannotConnectToHost"
        case .networkConnectionLost: "networkConnectionLost"
        case .dnsLookupFailed: "dnsLookupFailed"
        case .httpTooManyRedirects: "httpTooManyRedirects"
        case .resourceUnavailable: "resourceUnavailable"
        case .notConnectedToInternet: "notConnectedToInternet"
        case .redirectToNonExistentLocation: "redirectToNonExistentLocation"
        case .badServerResponse: "badServerResponse"
        case .userCancelledAuthentication: "userCancelledAuthentication"
        case .userAuthenticationRequired: "userAuthenticationRequired"
        case .zeroByteResource: "zeroByteResource"
        case .cannotDecodeRawData: "cannotDecodeRawData"
        case .cannotDecodeContentData: "cannotDecodeContentData"
        case .cannotParseResponse: "cannotParseResponse"
        case .dataLengthExceedsMaximum: "dataLengthExceedsMaximum"
        case .secureConnectionFailed: "secureConnectionFailed"
        case .serverCertificateHasBadDate: "serverCertificateHasBadDate"
        case .serverCertificateUntrusted: "serverCertificateUntrusted"
        case .serverCertificateHasUnknownRoot: "serverCertificateHasUnknownRoot"
        case .serverCertificateNotYetValid: "serverCertificateNotYetValid"
        case .clientCertificateRejected: "clientCertificateRejected"
        case .clientCertificateRequired: "clientCertificateRequired"
        case .cannotLoadFromNetwork: "cannotLoadFromNetwork"
        case .cannotCreateFile: "cannotCreateFile"
        case .cannotOpenFile: "cannotOpenFile"
        case .cannotCloseFile: "cannotCloseFile"
        case .cannotWriteToFile: "cannotWriteToFile"
        case .cannotRemoveFile: "cannotRemoveFile"
        case .cannotMoveFile: "cannotMoveFile"
        case .downloadDecodingFailedMidStream: "downloadDecodingFailedMidStream"
        case .downloadDecodingFailedToComplete: "downloadDecodingFailedToComplete"
        case .fileDoesNotExist: "fileDoesNotExist"
        case .fileIsDirectory: "fileIsDirectory"
        case .noPermissionsToReadFile: "noPermissionsToReadFile"
        case .requestBodyStreamExhausted: "requestBodyStreamExhausted"
        case .backgroundSessionWasDisconnected: "backgroundSessionWasDisconnected"
        case .unknown: "unknown"
        default: String(code.rawValue)
        }
    }
}

/// Trace headers into a hop's request.
struct URLRequestHeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into request: inout URLRequest) {
        request.setValue(value, forHTTPHeaderField: key)
    }
}
