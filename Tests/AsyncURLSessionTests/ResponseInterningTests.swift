import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@testable import AsyncURLSession
@testable import CurlEngine

/// Responses for identical heads are shared, and every answer matches what
/// corelibs' HTTPURLResponse gives for the same head. Pure: no engine, no network.
@Suite struct ResponseInterningTests {
    private let url = URL(string: "http://127.0.0.1:8080/files/1k.bin")!

    private func head(
        _ fields: [(String, String)], status: Int = 200, version: String = "HTTP/1.1"
    ) -> ResponseHead {
        let length = fields.last { $0.0.lowercased() == "content-length" }.flatMap { Int64($0.1) }
        return ResponseHead(
            statusCode: status, httpVersion: version,
            fields: ResponseHeaderFields(fields.map { (name: $0.0, value: $0.1) }),
            contentLength: length, hasContentEncoding: false, contentTypeIsMultipart: false)
    }

    /// What corelibs builds when given the head's fields the way URLSession
    /// does: repeated names (any casing) joined with ", " under the first one.
    private func corelibs(_ head: ResponseHead, url: URL) -> HTTPURLResponse {
        var fields: [String: String] = [:]
        var order: [String] = []
        for field in head.fields {
            if let first = order.first(where: { $0.lowercased() == field.name.lowercased() }) {
                fields[first]! += ", " + field.value
            } else {
                order.append(field.name)
                fields[field.name] = field.value
            }
        }
        return HTTPURLResponse(url: url, statusCode: head.statusCode, httpVersion: head.httpVersion, headerFields: fields)!
    }

    private static let nginx: [(String, String)] = [
        ("Server", "nginx/1.22.1"), ("Date", "Sun, 22 Nov 2026 04:56:54 GMT"),
        ("Content-Type", "application/octet-stream"), ("Content-Length", "1024"),
        ("Last-Modified", "Sun, 22 Nov 2026 04:56:54 GMT"), ("Connection", "keep-alive"),
        ("ETag", "\"6740-400\""), ("Cache-Control", "no-store"), ("Accept-Ranges", "bytes"),
    ]

    @Test func identicalHeads_shareOneResponse() {
        let interning = ResponseInterning(capacity: 4)
        let first = ResponseSource(head: head(Self.nginx), url: url, interning: interning).response
        let second = ResponseSource(head: head(Self.nginx), url: url, interning: interning).response
        #expect(first != nil)
        #expect(first === second)
        #expect(interning.count == 1)
    }

    @Test func headsDifferingInOneValue_getTheirOwnResponses() {
        let interning = ResponseInterning(capacity: 4)
        var later = Self.nginx
        later[1].1 = "Sun, 22 Nov 2026 04:56:55 GMT"
        let first = interning.response(for: head(Self.nginx), url: url)
        let second = interning.response(for: head(later), url: url)
        #expect(first !== second)
        #expect(first?.value(forHTTPHeaderField: "Date") == "Sun, 22 Nov 2026 04:56:54 GMT")
        #expect(second?.value(forHTTPHeaderField: "Date") == "Sun, 22 Nov 2026 04:56:55 GMT")
    }

    @Test func sameFieldsInAnotherOrder_getTheirOwnResponse() {
        let interning = ResponseInterning(capacity: 4)
        let first = interning.response(for: head(Self.nginx), url: url)
        let reordered = interning.response(for: head(Array(Self.nginx.reversed())), url: url)
        #expect(first !== reordered)
        #expect(interning.count == 2)
    }

    @Test func sameHeadFromAnotherURLOrStatus_getsItsOwnResponse() {
        let interning = ResponseInterning(capacity: 4)
        let first = interning.response(for: head(Self.nginx), url: url)
        let otherURL = interning.response(for: head(Self.nginx), url: URL(string: "http://127.0.0.1:8080/other")!)
        let otherStatus = interning.response(for: head(Self.nginx, status: 203), url: url)
        #expect(first !== otherURL)
        #expect(otherURL?.url?.path == "/other")
        #expect(first !== otherStatus)
        #expect(otherStatus?.statusCode == 203)
    }

    @Test func keepsAtMostItsCapacity_replacingTheOldest() {
        let interning = ResponseInterning(capacity: 3)
        let heads = (0..<5).map { head(Self.nginx + [("X-Index", "\($0)")]) }
        let first = interning.response(for: heads[0], url: url)
        for index in 1..<5 { _ = interning.response(for: heads[index], url: url) }
        #expect(interning.count == 3)
        #expect(interning.response(for: heads[0], url: url) !== first)
    }

    /// Lookups start from the newest entry: after the slots wrapped around,
    /// every kept head (newest, oldest kept, in between) must still be found.
    @Test func afterWrappingAround_everyKeptHeadIsStillShared() {
        let interning = ResponseInterning(capacity: 3)
        let heads = (0..<5).map { head(Self.nginx + [("X-Index", "\($0)")]) }
        let responses = heads.map { interning.response(for: $0, url: url) }
        for index in 2..<5 {
            #expect(interning.response(for: heads[index], url: url) === responses[index], "head \(index)")
        }
        #expect(interning.count == 3)
    }

    @Test func largeHead_isNotKept() {
        let interning = ResponseInterning(capacity: 4)
        let large = head((0..<40).map { ("X-Field-\($0)", "value") })
        let first = interning.response(for: large, url: url)
        let second = interning.response(for: large, url: url)
        #expect(first != nil)
        #expect(first !== second)
        #expect(interning.count == 0)
    }

    static let variedHeads: [[(String, String)]] = [
        nginx,
        // Repeated fields, in different casings, joined in order.
        [("Set-Cookie", "a=1"), ("set-cookie", "b=2"), ("Vary", "Accept"), ("VARY", "Origin"), ("Content-Length", "3")],
        // Odd casing, x- fields kept as sent, WWW-Authenticate spelled canonically.
        [("content-TYPE", "Text/HTML; Charset=ISO-8859-4"), ("x-request-id", "abc"), ("X-Mixed-CASE", "1"),
         ("www-authenticate", "Basic realm=\"r\""), ("etag", "\"e\"")],
        // No Content-Length; Content-Type with quoted charset and other parameters.
        [("Content-Type", "application/json;charset=\"utf-8\"; boundary=x"), ("Transfer-Encoding", "chunked")],
        // A repeated Content-Length is no number.
        [("Content-Length", "10"), ("Content-Length", "10")],
        // Content-Disposition names the file.
        [("Content-Disposition", "attachment; filename=\"report.pdf\""), ("Content-Type", "application/pdf")],
        // Empty values and no fields at all.
        [("X-Empty", ""), ("Accept-Ranges", "")],
        [],
    ]

    @Test(arguments: 0..<variedHeads.count)
    func answers_matchCorelibs(index: Int) throws {
        let head = head(Self.variedHeads[index], status: index == 2 ? 401 : 200)
        let expected = corelibs(head, url: url)
        let source = ResponseSource(head: head, url: url, interning: ResponseInterning(capacity: 4))
        let response = try #require(source.response)
        #expect(response.statusCode == expected.statusCode)
        #expect(response.url == expected.url)
        #expect(response.allHeaderFields as? [String: String] == expected.allHeaderFields as? [String: String])
        #expect(response.expectedContentLength == expected.expectedContentLength)
        #expect(response.mimeType == expected.mimeType)
        #expect(response.textEncodingName == expected.textEncodingName)
        #expect(response.suggestedFilename == expected.suggestedFilename)
        // The cheap accessors read from the head agree too.
        #expect(source.expectedContentLength == expected.expectedContentLength)
        #expect(source.statusCode == expected.statusCode)
        for (name, _) in Self.variedHeads[index] {
            for spelling in [name, name.lowercased(), name.uppercased()] {
                #expect(response.value(forHTTPHeaderField: spelling) == expected.value(forHTTPHeaderField: spelling))
                #expect(source.value(forHTTPHeaderField: spelling) == expected.value(forHTTPHeaderField: spelling))
            }
        }
    }
}
