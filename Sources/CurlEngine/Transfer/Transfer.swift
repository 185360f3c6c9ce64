internal import CCurl
import Foundation

/// The engine-thread side of one transfer: the easy handle's configuration,
/// libcurl's callbacks, and the flags the loop uses to pause, resume and
/// cancel. Never leaves the engine thread (so its `var`s skip run-time
/// exclusivity checks: see `EngineLoop`).
final class Transfer {
    let id: TransferID
    /// The session's placement, told when this transfer finishes.
    let placement: TransferPlacement
    var sessionID: EngineSessionID { placement.session }
    let easy: EasyHandle
    let delegate: any TransferDelegate
    let request: TransferRequest
    /// False when nobody can read this transfer's metrics: then they are not
    /// read from libcurl (a dozen getinfo calls) unless the transfer fails.
    let collectsMetrics: Bool
    /// The engine thread's turn clock, for `lastActivity`.
    let turn: EngineTurn.State
    let fetchStart = Date()
    /// `fetchStart` on the monotonic clock, for the times measured here;
    /// read only when metrics are collected (0 otherwise: no clock read
    /// per request for `data(for:)`).
    let fetchStartUptime: UInt64
    /// When the response head being read began (its first line), 0 between
    /// heads; and when the first final head began: the response's first
    /// byte. libcurl's STARTTRANSFER is when a read-callback upload begins
    /// (7.88.1; `curl -T` shows it too), so every upload's first byte, and
    /// `responseStartDate`, came before the server had said anything.
    /// Only read when metrics are collected (`collectsMetrics`).
    @exclusivity(unchecked) var headStartUptime: UInt64 = 0
    @exclusivity(unchecked) var responseStartUptime: UInt64 = 0

    /// Must outlive the transfer: libcurl keeps pointing at it.
    @exclusivity(unchecked) var headerList = HeaderList()
    @exclusivity(unchecked) var headParser: ResponseHeadParser
    /// What the outcome needs of the final head. Not the head itself: a copy
    /// kept here retained its buffers once more per response, and the head
    /// moves on to the delegate.
    @exclusivity(unchecked) var head: HeadSummary?
    @exclusivity(unchecked) var bodyBytesDelivered: Int64 = 0
    @exclusivity(unchecked) var uploadOffset: Int64 = 0
    /// Total request body bytes, -1 when unknown (a stream without length).
    @exclusivity(unchecked) var uploadLength: Int64 = 0
    /// An open file for `.file` bodies; closed when the transfer ends.
    @exclusivity(unchecked) var uploadFile: Int32 = -1
    /// A `.data` body, where libcurl reads it (CURLOPT_POSTFIELDS); released
    /// when the transfer ends, after the handle stops pointing at it.
    @exclusivity(unchecked) var memoryBody: MemoryBody?

    /// `suspend()` from the user: both directions paused.
    @exclusivity(unchecked) var suspended = false
    /// The consumer's buffer is full: receiving paused until it drains.
    @exclusivity(unchecked) var receivePaused = false
    /// A body stream had no bytes yet: sending paused until its producer writes.
    @exclusivity(unchecked) var sendPaused = false
    /// A transfer that was ever paused is never recycled: libcurl 7.88.1 can
    /// keep a paused h2 stream's buffer and deliver it to the handle's next
    /// transfer (curl #10971).
    @exclusivity(unchecked) var everPaused = false
    /// Set when cancelling: bytes libcurl still delivers are dropped.
    @exclusivity(unchecked) var discarding = false
    /// An error we caused from inside a callback (it surfaces as 23 or 42).
    @exclusivity(unchecked) var abortError: URLError?
    /// A handshake stopped so that the task can decide a TLS challenge.
    @exclusivity(unchecked) var tlsChallengeReport: TLSChallengeReport?
    /// Full duplex (a streamed request body): the response's end is found
    /// here, because libcurl 7.88.1 ends a transfer only once its upload has
    /// ended too and says nothing when a chunked response ends. For a chunked
    /// HTTP/1.1 response libcurl hands the body over raw and this decodes it.
    @exclusivity(unchecked) var chunkDecoder: ChunkedBodyDecoder?
    /// An option of the shape was changed mid-transfer: the handle is reset
    /// before it serves another transfer.
    @exclusivity(unchecked) var changedOptionsMidTransfer = false
    /// A streamed request body gave its end to libcurl.
    @exclusivity(unchecked) var uploadEnded = false
    /// The whole response arrived while the request body still streamed:
    /// the transfer was stopped there, and ended well.
    @exclusivity(unchecked) var respondedBeforeUploadEnded = false
    /// The session's pool metrics, when it has them (see `ConnectionPoolTally`).
    @exclusivity(unchecked) var poolTally: ConnectionPoolTally?
    /// Counted as waiting for a connection (pool metrics only).
    @exclusivity(unchecked) var awaitsConnection = false
    /// Monotonic nanoseconds of the last byte moved, for the idle timeout.
    @exclusivity(unchecked) var lastActivity: UInt64

    /// libcurl's receive buffer for this transfer: one recv reads at most
    /// this much (see `ReceiveBufferSize`).
    let receiveBufferSize: Int

    /// Largest response head we accept, against hostile servers.
    static let maximumHeaderBytes = 256 * 1024

    init(
        id: TransferID, placement: TransferPlacement, easy: EasyHandle, request: TransferRequest,
        collectsMetrics: Bool, receiveBufferSize: Int, delegate: any TransferDelegate, turn: EngineTurn.State
    ) {
        self.id = id
        self.receiveBufferSize = receiveBufferSize
        self.placement = placement
        self.easy = easy
        self.request = request
        self.collectsMetrics = collectsMetrics
        fetchStartUptime = collectsMetrics ? DispatchTime.now().uptimeNanoseconds : 0
        self.delegate = delegate
        self.turn = turn
        self.lastActivity = ccurl_monotonic_nanoseconds()
        headParser = ResponseHeadParser(buffers: easy.headBuffers)
        easy.headBuffers = HeadBuffers()
    }

    /// Waiting on our side (user, consumer or body producer), so not idle.
    var isPaused: Bool { suspended || receivePaused || sendPaused }

    /// Tells libcurl which directions are paused now. Each direction has its
    /// own reasons, so resuming one never releases the other by accident.
    /// Returns libcurl's code when a callback stopped the transfer inside
    /// this call: unpausing delivers the held bytes synchronously, and a
    /// callback that stops the transfer then (with `abortError`, or at the
    /// end of a response whose request body still streams) makes
    /// `curl_easy_pause` fail without libcurl ever reporting the transfer
    /// done. The loop must end it (`EngineLoop.applyPauseState(of:in:)`).
    @discardableResult
    func applyPauseState() -> CURLcode? {
        var mask: Int32 = 0
        if suspended || receivePaused { mask |= ccurl_pause_recv }
        if suspended || sendPaused { mask |= ccurl_pause_send }
        if mask != 0 { everPaused = true }
        // Fails with 43 before the connection exists; the callbacks then pause
        // at their first call because the flags are set.
        let code = curl_easy_pause(easy.raw, mask)
        guard code != CURLE_OK, code != CURLE_BAD_FUNCTION_ARGUMENT else { return nil }
        return code
    }

    /// Frees what the transfer holds besides the easy handle.
    func releaseResources() {
        easy.headBuffers = headParser.takeBuffers()
        if uploadFile >= 0 {
            close(uploadFile)
            uploadFile = -1
        }
        if let memoryBody {
            // libcurl is done with the handle (removed from its multi, or
            // never added); an idle or recycled handle must not keep
            // pointing at bytes about to be freed or released.
            easy.set(CURLOPT_POSTFIELDS, pointer: nil)
            memoryBody.release()
            self.memoryBody = nil
        }
        if case .stream(let stream, _) = request.body { stream.cancel() }
    }

    /// Applies every option this transfer needs: all of them on a reset
    /// handle, only the per-transfer ones on a handle that holds this
    /// transfer's shape (see `HandleShape`). Returns a URLError when libcurl
    /// refuses an option or cannot allocate.
    func configure(share: UnsafeMutableRawPointer?) -> URLError? {
        if let error = prepareBody() { return error }
        if request.tlsChallenges != nil, !Self.tlsHooksAvailable {
            return URLError.make(
                .secureConnectionFailed, url: request.url,
                reason: "Server-trust challenges need libcurl built with OpenSSL (libcurl4-openssl-dev); "
                    + "this libcurl's TLS library offers no verification callback. "
                    + "Turn off offersTLSChallenges or install libcurl's OpenSSL flavour.")
        }
        var failures: [CURLcode] = []
        func check(_ code: CURLcode) { if code != CURLE_OK { failures.append(code) } }
        if easy.holdsAShape {
            configurePerTransfer(check)
        } else {
            configureAll(share: share, check)
            if failures.isEmpty { easy.shape = HandleShape(request) }
        }
        guard let first = failures.first else { return nil }
        let reason = String(cString: curl_easy_strerror(first))
        return URLError.make(
            first == CURLE_OUT_OF_MEMORY ? .cannotLoadFromNetwork : .unsupportedURL,
            url: request.url,
            reason: "libcurl refused the transfer's options: \(reason) (libcurl error \(first.rawValue))")
    }

    /// The options that differ between transfers of one shape.
    private func configurePerTransfer(_ check: (CURLcode) -> Void) {
        let handle = easy
        let me = Unmanaged.passUnretained(self).toOpaque()
        handle.errorBuffer[0] = 0
        check(handle.set(CURLOPT_PRIVATE, pointer: me))
        check(handle.set(CURLOPT_URL, request.url))
        check(handle.set(CURLOPT_WRITEDATA, pointer: me))
        check(handle.set(CURLOPT_HEADERDATA, pointer: me))
        check(applyReceiveBufferSize())
        if let memoryBody {
            check(handle.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: uploadLength))
            check(handle.set(CURLOPT_POSTFIELDS, pointer: memoryBody.pointer))
            check(handle.set(CURLOPT_XFERINFODATA, pointer: me))
        } else if !isBodiless {
            check(handle.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: uploadLength))
            check(handle.set(CURLOPT_READDATA, pointer: me))
            check(handle.set(CURLOPT_SEEKDATA, pointer: me))
        }
        check(setHeaders())
    }

    private var isBodiless: Bool {
        if case .none = request.body { return true }
        return false
    }

    /// Sets CURLOPT_BUFFERSIZE unless the handle has it already, and records
    /// it on the handle. A recycled handle may still hold the receive buffer
    /// an earlier transfer allocated (7.88.1 keeps it after an h2 transfer),
    /// and then libcurl refuses any new size with 43 (setopt.c:
    /// `if(data->state.buffer)`). That is no failure: the handle reads into
    /// the buffer it has, which is at least the default 16 KiB; the size is
    /// recorded as unknown so the next transfer tries again.
    private func applyReceiveBufferSize() -> CURLcode {
        guard easy.receiveBufferSize != receiveBufferSize else { return CURLE_OK }
        let code = easy.set(CURLOPT_BUFFERSIZE, receiveBufferSize)
        easy.receiveBufferSize = code == CURLE_OK ? receiveBufferSize : 0
        return code == CURLE_BAD_FUNCTION_ARGUMENT ? CURLE_OK : code
    }

    /// Builds this transfer's header list and hands it to libcurl.
    private func setHeaders() -> CURLcode {
        var headersOK = true
        for header in request.headers where headersOK {
            headersOK = headerList.append(name: header.name, value: header.value)
        }
        // URLSession never sends Expect: 100-continue; libcurl would, and then
        // wait up to a second for a 100 that many servers never send. libcurl
        // adds it only to requests with a body (LIBCURL-NOTES §7), so a GET
        // needs no suppressing line: one slist node less, and libcurl's
        // per-request scan of custom headers has one entry less to compare.
        if !isBodiless, !request.headers.contains(where: { $0.name.equalsIgnoringASCIICase("Expect") }) {
            headersOK = headersOK && headerList.suppress("Expect")
        }
        // libcurl labels a POST-style body without a Content-Type as a form
        // (LIBCURL-NOTES §5), as Apple does for a body; an empty body is no
        // body, and nothing is invented for it.
        if !isBodiless, uploadLength == 0,
            !request.headers.contains(where: { $0.name.equalsIgnoringASCIICase("Content-Type") })
        {
            headersOK = headersOK && headerList.suppress("Content-Type")
        }
        if !headersOK { return CURLE_OUT_OF_MEMORY }
        return easy.set(CURLOPT_HTTPHEADER, pointer: headerList.raw.map { UnsafeMutableRawPointer($0) })
    }

    /// Every option, on a reset handle.
    private func configureAll(share: UnsafeMutableRawPointer?, _ check: (CURLcode) -> Void) {
        let handle = easy
        let me = Unmanaged.passUnretained(self).toOpaque()

        check(handle.set(CURLOPT_PRIVATE, pointer: me))
        check(handle.set(CURLOPT_URL, request.url))
        check(handle.set(CURLOPT_NOSIGNAL, 1))
        check(handle.set(CURLOPT_PROTOCOLS_STR, "http,https"))
        check(handle.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
        check(handle.set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(handle.errorBuffer)))
        // Redirects are decided by the core, one transfer per hop.
        check(handle.set(CURLOPT_FOLLOWLOCATION, 0))
        // Environment proxies are not read implicitly (libcurl would, silently).
        check(handle.set(CURLOPT_PROXY, request.proxy?.url ?? ""))
        // Nor no_proxy: without this option libcurl looks up no_proxy and
        // NO_PROXY in the environment for every transfer (url.c,
        // create_conn_helper_init_proxy), two linear scans of it. The core
        // applies a configuration's exceptions itself.
        check(handle.set(CURLOPT_NOPROXY, ""))
        if let proxy = request.proxy { configureProxy(proxy, check) }
        if let route = request.route { configureRoute(route, check) }
        // Wait for a pending connection that may multiplex instead of opening
        // one per request (LIBCURL-NOTES §4). Only TLS can negotiate h2 here (no
        // h2c): on cleartext it would only make requests queue behind a busy
        // HTTP/1.1 connection.
        if request.url.hasPrefixIgnoringASCIICase("https:") {
            check(handle.set(CURLOPT_PIPEWAIT, 1))
        }
        check(applyReceiveBufferSize())
        // Removing a transfer that is still resolving must not block the engine
        // thread on the resolver thread (LIBCURL-NOTES §1).
        check(handle.set(CURLOPT_QUICK_EXIT, 1))
        if let share { check(handle.set(CURLOPT_SHARE, pointer: share)) }

        check(ccurl_easy_setopt_write_function(handle.raw, transferWriteCallback))
        check(handle.set(CURLOPT_WRITEDATA, pointer: me))
        check(ccurl_easy_setopt_header_function(handle.raw, transferHeaderCallback))
        check(handle.set(CURLOPT_HEADERDATA, pointer: me))

        if let encoding = request.acceptEncoding {
            check(handle.set(CURLOPT_ACCEPT_ENCODING, encoding))
        }
        if let userAgent = request.userAgent {
            check(handle.set(CURLOPT_USERAGENT, userAgent))
        }
        if request.resourceTimeout > 0, request.resourceTimeout.isFinite {
            check(handle.set(CURLOPT_TIMEOUT_MS, Self.milliseconds(request.resourceTimeout)))
        }
        if request.connectTimeout > 0, request.connectTimeout.isFinite {
            check(handle.set(CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(request.connectTimeout)))
        }
        if !request.tlsVersions.isDefault {
            check(handle.set(CURLOPT_SSLVERSION, request.tlsVersions.curlValue))
        }
        if let roots = request.trustRootsPEM {
            check(handle.set(CURLOPT_CAINFO_BLOB, blob: roots))
            check(handle.set(CURLOPT_CAPATH, nil as String?))
        }
        // Part of libcurl's TLS configuration match, so a connection made
        // under other pins (or none) is never reused for this transfer.
        if let pin = request.pinnedPublicKey {
            check(handle.set(CURLOPT_PINNEDPUBLICKEY, pin))
        }
        if let identity = request.clientCertificate {
            check(handle.set(CURLOPT_SSLCERT_BLOB, blob: identity.certificate))
            check(handle.set(CURLOPT_SSLCERTTYPE, identity.format.rawValue))
            if let key = identity.privateKey {
                check(handle.set(CURLOPT_SSLKEY_BLOB, blob: key))
                check(handle.set(CURLOPT_SSLKEYTYPE, "PEM"))
            }
            if let password = identity.password {
                check(handle.set(CURLOPT_KEYPASSWD, password))
            }
        }

        if let challenges = request.tlsChallenges, request.url.hasPrefixIgnoringASCIICase("https:") {
            configureTLSChallenges(challenges, check)
        }

        if request.connectOnly {
            check(handle.set(CURLOPT_CONNECT_ONLY, 1))
            // ALPN offers http/1.1 only: the bytes that follow are an
            // HTTP/1.1 Upgrade, which an h2 connection cannot carry.
            check(handle.set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1))
            // Through an HTTP proxy, a tunnel even for a cleartext URL: the
            // bytes that follow are ours, not a request for the proxy.
            if request.proxy != nil { check(handle.set(CURLOPT_HTTPPROXYTUNNEL, 1)) }
        }

        configureMethodAndBody(check)
        if let authentication = request.authentication {
            // One method bit only: with several, libcurl first sends the request
            // without credentials (an extra round trip, LIBCURL-NOTES §6).
            let bit: UInt
            switch authentication.scheme {
            case .basic: bit = ccurl_auth_basic
            case .digest: bit = ccurl_auth_digest
            case .ntlm: bit = ccurl_auth_ntlm
            case .negotiate: bit = ccurl_auth_negotiate
            }
            check(handle.set(CURLOPT_HTTPAUTH, Int(bitPattern: bit)))
            check(handle.set(CURLOPT_USERNAME, authentication.user))
            check(handle.set(CURLOPT_PASSWORD, authentication.password))
        }

        check(setHeaders())
    }

    private func configureMethodAndBody(_ check: (CURLcode) -> Void) {
        let handle = easy
        let method = request.method
        switch request.body {
        case .none:
            if method == "GET" {
                check(handle.set(CURLOPT_HTTPGET, 1))
            } else if method == "HEAD" {
                // NOBODY, never CUSTOMREQUEST "HEAD": libcurl would wait for a body.
                check(handle.set(CURLOPT_NOBODY, 1))
            } else {
                check(handle.set(CURLOPT_CUSTOMREQUEST, method))
            }
        case .data:
            // A body in memory: POST mechanics with the method name replaced,
            // libcurl reading the bytes where they are (`MemoryBody`). It
            // resends them itself (auth rounds, a reused connection that
            // closed): nothing to rewind. The progress callback reports what
            // it sent, since no read callback sees the bytes.
            let me = Unmanaged.passUnretained(self).toOpaque()
            check(handle.set(CURLOPT_POST, 1))
            check(handle.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: uploadLength))
            check(handle.set(CURLOPT_POSTFIELDS, pointer: memoryBody?.pointer))
            check(ccurl_easy_setopt_xferinfo_function(handle.raw, transferProgressCallback))
            check(handle.set(CURLOPT_XFERINFODATA, pointer: me))
            check(handle.set(CURLOPT_NOPROGRESS, 0))
            // libcurl copies a body of 64 KiB or more into this buffer as it
            // sends it (lib/http.c readmoredata), so its size matters here too.
            check(handle.set(CURLOPT_UPLOAD_BUFFERSIZE, Self.uploadBufferSize))
            // With POSTFIELDS libcurl sends POST unless told another name.
            if method != "POST" { check(handle.set(CURLOPT_CUSTOMREQUEST, method)) }
        case .file, .stream:
            // POST mechanics with the method name replaced, and a read
            // callback that can rewind.
            let me = Unmanaged.passUnretained(self).toOpaque()
            check(handle.set(CURLOPT_POST, 1))
            // -1 makes libcurl send a body of unknown length chunked.
            check(handle.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: uploadLength))
            check(ccurl_easy_setopt_read_function(handle.raw, transferReadCallback))
            check(handle.set(CURLOPT_READDATA, pointer: me))
            check(ccurl_easy_setopt_seek_function(handle.raw, transferSeekCallback))
            check(handle.set(CURLOPT_SEEKDATA, pointer: me))
            check(handle.set(CURLOPT_UPLOAD_BUFFERSIZE, Self.uploadBufferSize))
            if method != "POST" { check(handle.set(CURLOPT_CUSTOMREQUEST, method)) }
            if case .stream(let stream, _) = request.body, stream.sendsTrailers {
                // libcurl 7.88.1 asks for trailers only at the end of a
                // chunked HTTP/1.1 upload; over HTTP/2 it never does.
                check(handle.set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1))
                check(ccurl_easy_setopt_trailer_function(handle.raw, transferTrailerCallback))
                check(handle.set(CURLOPT_TRAILERDATA, pointer: me))
            }
        }
    }

    /// libcurl's upload buffer. 64 KiB (the default) roughly halves loopback
    /// upload throughput. libcurl allocates this buffer for every transfer
    /// with a body and frees it when the transfer ends; at 256 KiB glibc
    /// served it from mmap or a heap top it then trimmed, so every upload
    /// faulted its buffer in afresh (500 POSTs of 1 MiB at concurrency 16:
    /// about 27,000 page faults). Below glibc's 128 KiB mmap threshold it is
    /// reused from the engine thread's heap: about 2,300 faults, CPU per
    /// request 529 -> 418 µs, 1,339 -> 1,755 req/s (medians of 9
    /// alternating runs).
    static let uploadBufferSize = 120 * 1024

    /// Opens a file body and learns the body's length. Runs before any
    /// option is set, so a missing file fails the task before a byte is sent.
    func prepareBody() -> URLError? {
        switch request.body {
        case .none:
            uploadLength = 0
        case .data(let data):
            uploadLength = Int64(data.count)
            memoryBody = MemoryBody(data)
        case .stream(let stream, let length):
            if stream.sendsTrailers, length != nil {
                return URLError.make(
                    .requestBodyStreamExhausted, url: request.url,
                    reason: "Trailer fields follow only a body of unknown length, which is sent chunked: "
                        + "remove Content-Length from the request, or send no trailers.")
            }
            uploadLength = length ?? -1
        case .file(let url):
            let fd = open(url.path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                let code: URLError.Code = errno == ENOENT || errno == ENOTDIR ? .fileDoesNotExist : .noPermissionsToReadFile
                return URLError.make(
                    code, url: request.url,
                    reason: "Cannot read the upload file \(url.path): \(String(cString: strerror(errno))).")
            }
            var info = stat()
            guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                close(fd)
                return URLError.make(
                    .fileIsDirectory, url: request.url, reason: "The upload file \(url.path) is not a regular file.")
            }
            uploadFile = fd
            uploadLength = Int64(info.st_size)
        }
        return nil
    }

    private static func milliseconds(_ seconds: Double) -> Int {
        let value = (seconds * 1000).rounded(.up)
        return value >= Double(Int.max / 2) ? Int.max / 2 : max(1, Int(value))
    }

    // MARK: Callback bodies (engine thread, inside libcurl)

    fileprivate func receiveHeader(_ bytes: UnsafeRawBufferPointer) -> Int {
        lastActivity = turn.turnStart
        if discarding { return bytes.count }
        if collectsMetrics, headStartUptime == 0 { headStartUptime = DispatchTime.now().uptimeNanoseconds }
        guard let head = headParser.consume(bytes) else {
            if headParser.byteCount > Self.maximumHeaderBytes {
                abortError = URLError.make(
                    .badServerResponse, url: request.url,
                    reason: "The response header exceeds \(Self.maximumHeaderBytes) bytes.")
                return 0
            }
            return bytes.count
        }
        // The next line begins another head (or the trailers).
        let headStart = headStartUptime
        headStartUptime = 0
        if head.isInformational {
            delegate.transferDidReceiveInformationalHead(head, of: id)
            return bytes.count
        }
        if responseStartUptime == 0 { responseStartUptime = headStart }
        if let problem = head.framingProblem {
            // Failing the header callback ends the transfer and closes the
            // connection: nothing after this head is ever read as a response.
            abortError = URLError.make(
                .badServerResponse, url: request.url,
                reason: problem.reason(contentLengths: head.fields.values(named: "Content-Length")))
            return 0
        }
        self.head = HeadSummary(head)
        if case .stream = request.body, !head.hasContentEncoding, head.httpVersion.hasPrefix("HTTP/1"),
            head.fields.value(named: "Transfer-Encoding")?.lowercased() == "chunked"
        {
            // Full duplex: decode the chunks here to see the response's end
            // (set now, libcurl reads the body's first bytes after this call).
            if easy.set(CURLOPT_HTTP_TRANSFER_DECODING, 0) == CURLE_OK {
                chunkDecoder = ChunkedBodyDecoder()
                changedOptionsMidTransfer = true
            }
        }
        if memoryBody != nil, let sent = easy.info(offset: CURLINFO_SIZE_UPLOAD_T) {
            // What libcurl sent before this head is told first: its progress
            // callback may not have run since (a small body goes out with
            // the request head, and the answer can be read in the same turn).
            uploadProgressed(to: sent)
        }
        delegate.transferDidReceiveHead(head, of: id)
        return bytes.count
    }

    /// The response has ended with these bytes. While a streamed request
    /// body is still being sent, the transfer stops here: its producer is
    /// told to stop, and the outcome is a success (`respondedBeforeUploadEnded`).
    private func responseEnded(_ count: Int) -> Int {
        guard case .stream(let stream, _) = request.body, !uploadEnded else { return count }
        respondedBeforeUploadEnded = true
        stream.cancel()
        return 0
    }

    /// A chunked body libcurl hands over raw (`chunkDecoder`): the data goes
    /// to the delegate decoded, in one piece per call so that a pause leaves
    /// the decoder where it was (libcurl hands the same bytes again).
    private func receiveRawChunks(_ bytes: UnsafeRawBufferPointer, decoder: ChunkedBodyDecoder) -> Int {
        var decoder = decoder
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        let state = decoder.decode(bytes) { decoded.append(contentsOf: $0) }
        if state == .malformed {
            abortError = URLError.make(
                .badServerResponse, url: request.url, reason: "The response's chunked body is malformed.")
            return 0
        }
        let verdict = decoded.isEmpty ? .accepted : decoded.withUnsafeBytes { delegate.transferDidReceiveBody($0, of: id) }
        guard case .accepted = verdict else { return notTaken(verdict) }
        chunkDecoder = decoder
        bodyBytesDelivered += Int64(decoded.count)
        return state == .ended ? responseEnded(bytes.count) : bytes.count
    }

    /// What the write callback answers when the task did not take the
    /// bytes: pause (libcurl offers them again after `resumeReceiving`), or
    /// stop with the task's error.
    private func notTaken(_ verdict: BodyVerdict) -> Int {
        switch verdict {
        case .pause:
            receivePaused = true
            everPaused = true
            return ccurl_writefunc_pause
        case .abort(let error):
            abortError = error
            return 0
        case .accepted:
            preconditionFailure("taken bytes are no refusal")
        }
    }

    /// The trailer fields a raw chunked body ended with.
    var decodedTrailers: ResponseHeaderFields? {
        guard let lines = chunkDecoder?.trailerLines, !lines.isEmpty else { return nil }
        var fields = ResponseHeaderFields()
        for line in lines { line.withUnsafeBytes { fields.append(line: $0) } }
        return fields
    }

    fileprivate func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        lastActivity = turn.turnStart
        if discarding { return bytes.count }
        if suspended {
            everPaused = true
            return ccurl_writefunc_pause
        }
        if let chunkDecoder { return receiveRawChunks(bytes, decoder: chunkDecoder) }
        // Only bodies that libcurl decodes are measured (one flag test for
        // the others).
        if let head, head.hasContentEncoding, let limit = request.decompressionLimit,
            let error = limit.violation(decoded: bodyBytesDelivered + Int64(bytes.count), encoded: encodedBytesReceived, url: request.url)
        {
            abortError = error
            return 0
        }
        let verdict = delegate.transferDidReceiveBody(bytes, of: id)
        guard case .accepted = verdict else { return notTaken(verdict) }
        bodyBytesDelivered += Int64(bytes.count)
        // Full duplex with a Content-Length: its last byte ends the response.
        if case .stream = request.body, let head, !head.hasContentEncoding,
            let length = head.contentLength, bodyBytesDelivered == length
        {
            return responseEnded(bytes.count)
        }
        return bytes.count
    }

    /// Body bytes received from the network so far, before decoding
    /// (libcurl's download counter counts encoded bytes, LIBCURL-NOTES §8).
    private var encodedBytesReceived: Int64 {
        easy.info(offset: CURLINFO_SIZE_DOWNLOAD_T) ?? 0
    }

    fileprivate func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        lastActivity = turn.turnStart
        if suspended {
            everPaused = true
            return ccurl_readfunc_pause
        }
        let count: Int
        switch request.body {
        case .none:
            return 0
        case .data(let data):
            // Not reached: a `.data` body goes to libcurl as POSTFIELDS, and
            // its handle has no read callback. Counted, for the tests.
            count = min(buffer.count, data.count - Int(uploadOffset))
            MemoryBodyReadCallbackCount.add(max(count, 0))
            if count > 0 {
                data.withUnsafeBytes { source in
                    buffer.baseAddress!.copyMemory(from: source.baseAddress! + Int(uploadOffset), byteCount: count)
                }
            }
        case .file(let url):
            let read = pread(uploadFile, buffer.baseAddress, buffer.count, off_t(uploadOffset))
            guard read >= 0 else {
                abortError = URLError.make(
                    .requestBodyStreamExhausted, url: request.url,
                    reason: "Reading the upload file \(url.path) failed: \(String(cString: strerror(errno))).")
                return ccurl_readfunc_abort
            }
            if read == 0 && uploadOffset < uploadLength {
                abortError = URLError.make(
                    .requestBodyStreamExhausted, url: request.url,
                    reason: "The upload file \(url.path) shrank while it was sent.")
                return ccurl_readfunc_abort
            }
            count = read
        case .stream(let stream, _):
            switch stream.read(into: buffer, waking: id, in: sessionID) {
            case .bytes(let read):
                count = read
            case .wait:
                sendPaused = true
                everPaused = true
                return ccurl_readfunc_pause
            case .end:
                count = 0
                uploadEnded = true
            case .failed(let error):
                abortError = error
                return ccurl_readfunc_abort
            }
        }
        if count > 0 {
            uploadOffset += Int64(count)
            delegate.transferDidSendBody(totalBytesSent: uploadOffset, totalBytesExpected: uploadLength, of: id)
        }
        return count
    }

    /// The trailer fields of a chunked upload whose body has ended, appended
    /// to libcurl's list (checked by the core: tokens, no CR, LF or NUL).
    fileprivate func sendTrailers(into list: UnsafeMutablePointer<UnsafeMutablePointer<curl_slist>?>) -> Int32 {
        guard case .stream(let stream, _) = request.body else { return Int32(CURL_TRAILERFUNC_OK) }
        for (name, value) in stream.trailers {
            guard let appended = curl_slist_append(list.pointee, "\(name): \(value)") else {
                return Int32(CURL_TRAILERFUNC_ABORT)
            }
            list.pointee = appended
        }
        return Int32(CURL_TRAILERFUNC_OK)
    }

    /// libcurl's progress for a `.data` body (CURLOPT_POSTFIELDS): called
    /// many times per transfer, it tells the delegate only when the upload
    /// moved. Counts as activity for the idle timeout, as the read callback
    /// does for other bodies. An authentication round sends the body again
    /// from 0, and the totals start again, as after a rewind.
    fileprivate func uploadProgressed(to sent: Int64) {
        guard sent != uploadOffset else { return }
        uploadOffset = sent
        lastActivity = turn.turnStart
        if sent > 0 {
            delegate.transferDidSendBody(totalBytesSent: sent, totalBytesExpected: uploadLength, of: id)
        }
    }

    fileprivate func seekBody(to offset: Int64) -> Int32 {
        switch request.body {
        case .data, .file:
            guard offset >= 0, offset <= max(uploadLength, 0) else { return Int32(ccurl_seekfunc_cantseek) }
            uploadOffset = offset
            return Int32(ccurl_seekfunc_ok)
        case .none, .stream:
            // A stream cannot go back; libcurl then fails with 65 and the core
            // asks for a new body stream.
            return offset == uploadOffset ? Int32(ccurl_seekfunc_ok) : Int32(ccurl_seekfunc_cantseek)
        }
    }
}

// MARK: - C trampolines. They capture nothing; userdata is the unretained Transfer,
// kept alive by its session's transfer table until after curl_multi_remove_handle.
// `_withUnsafeGuaranteedRef` because of that: libcurl calls the header callback
// once per header line, and retaining and releasing the transfer around each
// call was about a tenth of a small request's retains.

private let transferWriteCallback: ccurl_data_callback = { buffer, size, count, userdata in
    let bytes = UnsafeRawBufferPointer(start: buffer, count: size * count)
    return Unmanaged<Transfer>.fromOpaque(userdata!)._withUnsafeGuaranteedRef { $0.receiveBody(bytes) }
}

private let transferHeaderCallback: ccurl_data_callback = { buffer, size, count, userdata in
    let bytes = UnsafeRawBufferPointer(start: buffer, count: size * count)
    return Unmanaged<Transfer>.fromOpaque(userdata!)._withUnsafeGuaranteedRef { $0.receiveHeader(bytes) }
}

private let transferReadCallback: ccurl_data_callback = { buffer, size, count, userdata in
    let destination = UnsafeMutableRawBufferPointer(start: buffer, count: size * count)
    return Unmanaged<Transfer>.fromOpaque(userdata!)._withUnsafeGuaranteedRef { $0.sendBody(into: destination) }
}

private let transferTrailerCallback: ccurl_trailer_callback = { list, userdata in
    Unmanaged<Transfer>.fromOpaque(userdata!)._withUnsafeGuaranteedRef { $0.sendTrailers(into: list!) }
}

private let transferProgressCallback: ccurl_xferinfo_callback = { userdata, _, _, _, uploaded in
    Unmanaged<Transfer>.fromOpaque(userdata!)._withUnsafeGuaranteedRef { $0.uploadProgressed(to: Int64(uploaded)) }
    return 0
}

private let transferSeekCallback: ccurl_seek_callback = { userdata, offset, origin in
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata!).takeUnretainedValue()
    guard origin == SEEK_SET else { return Int32(ccurl_seekfunc_cantseek) }
    return transfer.seekBody(to: Int64(offset))
}
