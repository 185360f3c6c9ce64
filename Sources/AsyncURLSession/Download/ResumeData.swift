import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `cancel(byProducingResumeData:)` returns and what a download that
/// failed after receiving bytes carries in its error: enough to continue the
/// download later with an HTTP Range request validated by If-Range.
///
/// Format (JSON, versioned, self-validating):
/// `{"format": "AsyncURLSession.ResumeData", "version": 1, "payload": {...}, "checksum": "<FNV-1a 64 hex>"}`
/// where the checksum covers the payload's canonical JSON (sorted keys). The
/// payload holds the URL, method and headers of the request, the partial
/// file's name (inside the session's download folder), the bytes it holds,
/// and the validator (a strong ETag or Last-Modified).
struct ResumeData: Sendable, Equatable {
    static let format = "AsyncURLSession.ResumeData"
    static let version = 1

    struct Payload: Codable, Sendable, Equatable {
        var url: String
        var method: String
        var headers: [[String]]
        var fileName: String
        var bytesReceived: Int64
        var entityTag: String?
        var lastModified: String?
    }

    var payload: Payload

    /// The If-Range value: a strong ETag, else Last-Modified.
    var validator: String? { payload.entityTag ?? payload.lastModified }

    private struct Envelope: Codable {
        var format: String
        var version: Int
        var payload: Payload
        var checksum: String
    }

    func encoded() -> Data? {
        guard let canonical = Self.canonical(payload) else { return nil }
        let envelope = Envelope(
            format: Self.format, version: Self.version, payload: payload, checksum: Self.checksum(canonical))
        return try? JSONEncoder().encode(envelope)
    }

    /// Decodes and checks resume data; the error says what is wrong with it.
    static func decode(_ data: Data) -> Result<ResumeData, URLError> {
        func refuse(_ reason: String) -> Result<ResumeData, URLError> {
            .failure(URLError(.cannotDecodeRawData, userInfo: [NSLocalizedDescriptionKey: "Invalid resume data: \(reason)"]))
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            object["format"] as? String == format
        else { return refuse("it is not AsyncURLSession resume data.") }
        guard object["version"] as? Int == version else {
            return refuse("it has version \(object["version"] ?? "?"), this library reads version \(version).")
        }
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: data),
            let canonical = canonical(envelope.payload)
        else { return refuse("its fields are missing or malformed.") }
        guard checksum(canonical) == envelope.checksum else { return refuse("its checksum does not match (corrupted or edited).") }
        let payload = envelope.payload
        guard let url = URL(string: payload.url), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return refuse("its URL is not an http(s) URL.") }
        guard payload.bytesReceived >= 0, payload.validator(isUsable: true) else {
            return refuse("it has no validator or a negative length.")
        }
        guard payload.headers.allSatisfy({ $0.count == 2 }) else { return refuse("its headers are malformed.") }
        return .success(ResumeData(payload: payload))
    }

    /// The request that continues the download from `bytesReceived`.
    func request() -> URLRequest? {
        guard let url = URL(string: payload.url), let validator else { return nil }
        var request = URLRequest(url: url)
        request.httpMethod = payload.method
        for header in payload.headers where header.count == 2 {
            request.setValue(header[1], forHTTPHeaderField: header[0])
        }
        request.setValue("bytes=\(payload.bytesReceived)-", forHTTPHeaderField: "Range")
        request.setValue(validator, forHTTPHeaderField: "If-Range")
        return request
    }

    private static func canonical(_ payload: Payload) -> Data? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try? encoder.encode(payload)
    }

    /// FNV-1a, 64 bits: catches corruption and casual edits (not an attacker,
    /// which is why the file name is validated separately).
    static func checksum(_ data: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return String(hash, radix: 16)
    }
}

extension ResumeData.Payload {
    fileprivate func validator(isUsable: Bool) -> Bool {
        entityTag != nil || lastModified != nil
    }
}

extension ResumeData {
    /// The validator a response offers for If-Range: a strong ETag (weak ones
    /// cannot be used, RFC 9110 §13.1.5), else Last-Modified.
    static func validator(of response: HTTPURLResponse) -> (entityTag: String?, lastModified: String?) {
        let tag = response.value(forHTTPHeaderField: "ETag").flatMap { $0.hasPrefix("W/") ? nil : $0 }
        return (tag, response.value(forHTTPHeaderField: "Last-Modified"))
    }
}

extension URLError {
    /// Apple's userInfo key for the resume data of a failed download.
    public static let downloadTaskResumeDataKey = "NSURLSessionDownloadTaskResumeData"

    /// The resume data of a download that failed after receiving bytes, as
    /// on Apple platforms (corelibs lacks this accessor).
    public var downloadTaskResumeData: Data? {
        userInfo[Self.downloadTaskResumeDataKey] as? Data
    }
}
