// MIGRATION.md's scoped imports, as a library on Linux writes them: every
// name FoundationNetworking declares imports the same way from the adapter.
#if canImport(FoundationNetworking)
@preconcurrency import struct URLSessionCompat.URLRequest
import class URLSessionCompat.URLSession
import class URLSessionCompat.URLSessionTask
import class URLSessionCompat.URLResponse
import class URLSessionCompat.HTTPURLResponse
#endif
import struct Foundation.URL

/// What a library does with them: the status of a response, or nil.
func scopedStatus(of response: URLResponse) -> Int? {
    (response as? HTTPURLResponse)?.statusCode
}
