internal import CCurl
import Foundation

/// One libcurl easy handle plus the error buffer that lives as long as it does.
/// Engine thread only. Recycled across transfers of one session only (reset,
/// or keeping the options of a same-shape transfer: see `HandleShape`), so the
/// TLS session cache and DNS entries it holds never cross into another session.
/// Its `var`s skip run-time exclusivity checks (see `EngineLoop`).
final class EasyHandle {
    let raw: UnsafeMutableRawPointer
    /// CURLOPT_ERRORBUFFER must be at least CURL_ERROR_SIZE and outlive the transfer.
    let errorBuffer: UnsafeMutablePointer<CChar>
    /// The shape whose options the handle holds since its last reset; nil
    /// for a new or reset handle.
    @exclusivity(unchecked) var shape: HandleShape?

    /// Whether the handle holds every shape option of `request`.
    func holdsShape(of request: TransferRequest) -> Bool {
        shape?.matches(request) ?? false
    }

    var holdsAShape: Bool { shape != nil }

    /// The CURLOPT_BUFFERSIZE last set on the handle; libcurl's default after
    /// a reset, 0 when unknown (libcurl refused a change).
    @exclusivity(unchecked) var receiveBufferSize = ReceiveBufferSize.libcurlDefault

    /// Whether `SocketHooks` are set (a reset clears them).
    @exclusivity(unchecked) var socketHooksInstalled = false
    /// What the counting socket hooks' data points to (a session's
    /// `ConnectionPoolTally`), kept while libcurl may call them: a
    /// connection is closed with the hooks of the handle that opened it.
    @exclusivity(unchecked) var socketHookOwner: AnyObject?

    /// The response-head buffers the handle's transfers reuse (see `HeadBuffers`).
    @exclusivity(unchecked) var headBuffers = HeadBuffers()

    init?() {
        guard let raw = curl_easy_init() else { return nil }
        self.raw = raw
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        curl_easy_cleanup(raw)
        errorBuffer.deallocate()
    }

    /// Clears every option so the next transfer starts from libcurl's defaults.
    /// Why a full reset: method options are sticky on a reused handle
    /// (CUSTOMREQUEST persists, HTTPGET 0 does nothing; CVE-2022-32221).
    func reset() {
        curl_easy_reset(raw)
        errorBuffer[0] = 0
        shape = nil
        socketHooksInstalled = false
        receiveBufferSize = ReceiveBufferSize.libcurlDefault
    }

    var errorMessage: String? {
        errorBuffer[0] == 0 ? nil : String(cString: errorBuffer)
    }

    // MARK: Options. Each returns the CURLcode; callers fold failures into one error.

    @discardableResult
    func set(_ option: CURLoption, _ value: Int) -> CURLcode {
        ccurl_easy_setopt_long(raw, option, value)
    }

    @discardableResult
    func set(_ option: CURLoption, offset value: Int64) -> CURLcode {
        ccurl_easy_setopt_off_t(raw, option, curl_off_t(value))
    }

    /// libcurl copies strings passed with setopt (since 7.17), so a temporary is fine.
    @discardableResult
    func set(_ option: CURLoption, _ value: String?) -> CURLcode {
        guard let value else { return ccurl_easy_setopt_string(raw, option, nil) }
        return value.withCString { ccurl_easy_setopt_string(raw, option, $0) }
    }

    @discardableResult
    func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?) -> CURLcode {
        ccurl_easy_setopt_pointer(raw, option, pointer)
    }

    /// Blob options are copied by libcurl (CURL_BLOB_COPY).
    @discardableResult
    func set(_ option: CURLoption, blob: Data) -> CURLcode {
        blob.withUnsafeBytes { ccurl_easy_setopt_blob(raw, option, $0.baseAddress, $0.count) }
    }

    // MARK: Information

    func info(long option: CURLINFO) -> Int? {
        var value = 0
        return ccurl_easy_getinfo_long(raw, option, &value) == CURLE_OK ? value : nil
    }

    func info(offset option: CURLINFO) -> Int64? {
        var value: curl_off_t = 0
        return ccurl_easy_getinfo_off_t(raw, option, &value) == CURLE_OK ? Int64(value) : nil
    }

    /// The connection's socket (CURLINFO_ACTIVESOCKET), nil when there is none.
    func activeSocket() -> Int32? {
        var socket: curl_socket_t = -1
        return ccurl_easy_getinfo_socket(raw, &socket) == CURLE_OK && socket >= 0 ? socket : nil
    }

    func info(string option: CURLINFO) -> String? {
        var value: UnsafePointer<CChar>?
        guard ccurl_easy_getinfo_string(raw, option, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }
}
