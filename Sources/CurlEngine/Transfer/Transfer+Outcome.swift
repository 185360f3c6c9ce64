internal import CCurl
import Foundation

extension Transfer {
    /// Reads metrics and turns libcurl's result into the transfer's outcome.
    /// Must run before the handle is removed from its multi (info resets after).
    func outcome(code: CURLcode) -> TransferOutcome {
        // A failure needs them to tell what went wrong (connected or not).
        let metrics = collectsMetrics || code != CURLE_OK ? collectMetrics() : .empty(fetchStart: fetchStart)
        if code == CURLE_OK || respondedBeforeUploadEnded {
            // A response that ended while its request body still streamed
            // was stopped by us (23) once whole: a success.
            var outcome = TransferOutcome(error: respondedBeforeUploadEnded ? nil : truncationError(), metrics: metrics)
            if outcome.error == nil { outcome.trailers = headParser.takeTrailers() ?? decodedTrailers }
            return outcome
        }
        if let report = tlsChallengeReport {
            var outcome = TransferOutcome(
                error: URLError.make(
                    .secureConnectionFailed, url: request.url,
                    reason: "The TLS handshake stopped for the task's decision on a TLS challenge."),
                metrics: metrics)
            outcome.tlsChallenge = report
            return outcome
        }
        if let abortError {
            return TransferOutcome(error: abortError, metrics: metrics)
        }
        if let methods = proxyAuthenticationMethods() {
            var outcome = TransferOutcome(
                error: URLError.make(
                    .userAuthenticationRequired, url: request.url,
                    reason: "The proxy requires authentication (407 to CONNECT): answer the proxy's challenge "
                        + "or give the proxy configuration a user and password."),
                metrics: metrics)
            outcome.proxyAuthenticationMethods = methods
            return outcome
        }
        let failure = CurlFailure(
            code: code,
            osErrno: easy.info(long: CURLINFO_OS_ERRNO) ?? 0,
            verifyResult: easy.info(long: CURLINFO_SSL_VERIFYRESULT) ?? 0,
            receivedResponse: head != nil,
            connected: metrics.connect != nil,
            message: routeFailureMessage(code)
                ?? easy.errorMessage ?? String(cString: curl_easy_strerror(code)),
            url: request.url)
        return TransferOutcome(error: failure.urlError(), metrics: metrics)
    }

    /// libcurl 7.88.1 can report an h2 stream reset as a complete body
    /// (curl #10693, #10715). A body shorter than its Content-Length is a lost
    /// connection, whatever libcurl says. Only checkable when no content coding
    /// changed the length.
    private func truncationError() -> URLError? {
        guard let head, request.method != "HEAD", head.statusCode != 204, head.statusCode != 304 else {
            return nil
        }
        guard !head.hasContentEncoding, let contentLength = head.contentLength,
            bodyBytesDelivered < contentLength
        else { return nil }
        return URLError.make(
            .networkConnectionLost, url: request.url,
            reason: "The connection ended after \(bodyBytesDelivered) of \(contentLength) body bytes.")
    }

    private func collectMetrics() -> TransferMetrics {
        func seconds(_ info: CURLINFO) -> Double? {
            guard let micro = easy.info(offset: info), micro > 0 else { return nil }
            return Double(micro) / 1_000_000
        }
        var metrics = TransferMetrics.empty(fetchStart: fetchStart)
        metrics.domainLookup = seconds(CURLINFO_NAMELOOKUP_TIME_T)
        metrics.connect = seconds(CURLINFO_CONNECT_TIME_T)
        metrics.secureConnection = seconds(CURLINFO_APPCONNECT_TIME_T)
        metrics.requestStart = seconds(CURLINFO_PRETRANSFER_TIME_T)
        metrics.total = seconds(CURLINFO_TOTAL_TIME_T) ?? 0
        // The first final head's first line, timed here (see
        // `responseStartUptime`); libcurl's start-transfer time without one.
        // Ours counts from `fetchStart`, libcurl's from when it took the
        // transfer up, a little later (more on a busy engine): kept between
        // the request's start and the end, so the phases stay in order.
        if responseStartUptime > fetchStartUptime {
            let measured = Double(responseStartUptime - fetchStartUptime) / 1_000_000_000
            let upper = metrics.total > 0 ? metrics.total : measured
            metrics.firstByte = min(max(measured, metrics.requestStart ?? 0), upper)
        } else {
            metrics.firstByte = seconds(CURLINFO_STARTTRANSFER_TIME_T)
        }
        metrics.httpVersion = Self.protocolName(easy.info(long: CURLINFO_HTTP_VERSION) ?? 0)
        // NUM_CONNECTS counts new connections made for this transfer: none
        // means an existing one was reused (CONN_ID only arrives in 8.2).
        metrics.reusedConnection = head != nil && (easy.info(long: CURLINFO_NUM_CONNECTS) ?? 1) == 0
        metrics.remoteAddress = easy.info(string: CURLINFO_PRIMARY_IP).flatMap { $0.isEmpty ? nil : $0 }
        metrics.remotePort = easy.info(long: CURLINFO_PRIMARY_PORT).flatMap { $0 == 0 ? nil : $0 }
        metrics.localAddress = easy.info(string: CURLINFO_LOCAL_IP).flatMap { $0.isEmpty ? nil : $0 }
        metrics.localPort = easy.info(long: CURLINFO_LOCAL_PORT).flatMap { $0 == 0 ? nil : $0 }
        metrics.requestHeaderBytes = Int64(easy.info(long: CURLINFO_REQUEST_SIZE) ?? 0)
        metrics.requestBodyBytes = easy.info(offset: CURLINFO_SIZE_UPLOAD_T) ?? 0
        metrics.responseHeaderBytes = Int64(easy.info(long: CURLINFO_HEADER_SIZE) ?? 0)
        metrics.responseBodyBytes = easy.info(offset: CURLINFO_SIZE_DOWNLOAD_T) ?? 0
        return metrics
    }

    /// ALPN protocol identifiers, as URLSessionTaskTransactionMetrics reports them.
    private static func protocolName(_ version: Int) -> String? {
        switch version {
        case Int(CURL_HTTP_VERSION_1_0): return "http/1.0"
        case Int(CURL_HTTP_VERSION_1_1): return "http/1.1"
        case Int(CURL_HTTP_VERSION_2_0): return "h2"
        case Int(CURL_HTTP_VERSION_3): return "h3"
        default: return nil
        }
    }
}
