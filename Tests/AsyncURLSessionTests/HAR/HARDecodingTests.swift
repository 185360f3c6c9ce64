import AsyncURLSession
import Foundation
import Testing

/// How `HAR` reads a file: the fields a request and a response share are
/// read by one decoder, so both sides are checked, left out and present.
@Suite struct HARDecodingTests {
    private static func entry(request: String, response: String) throws -> HAR.Entry {
        let json = """
            {"log": {"version": "1.2", "creator": {"name": "a browser", "version": "1"}, "entries": [
              {"startedDateTime": "2024-01-01T00:00:00.000Z", "time": 1, "cache": {}, "timings": {},
               "request": \(request), "response": \(response)}
            ]}}
            """
        let document = try JSONDecoder().decode(HAR.Document.self, from: Data(json.utf8))
        return try #require(document.log.entries.first)
    }

    @Test func sharedFieldsLeftOut_readAsUnknownOrEmpty_onBothSides() throws {
        let entry = try Self.entry(request: #"{"method": "GET", "url": "https://a.example/"}"#, response: #"{"status": 200}"#)
        #expect(entry.request.httpVersion == "")
        #expect(entry.request.cookies.isEmpty && entry.request.headers.isEmpty)
        #expect(entry.request.headersSize == -1 && entry.request.bodySize == -1)
        #expect(entry.response.httpVersion == "")
        #expect(entry.response.cookies.isEmpty && entry.response.headers.isEmpty)
        #expect(entry.response.headersSize == -1 && entry.response.bodySize == -1)
        #expect(entry.response.statusText == "" && entry.response.redirectURL == "")
    }

    @Test func sharedFieldsPresent_readAsWritten_onBothSides() throws {
        let shared = """
            "httpVersion": "HTTP/2", "cookies": [{"name": "c", "value": "1"}],
            "headers": [{"name": "h", "value": "2"}], "headersSize": 30, "bodySize": 4
            """
        let entry = try Self.entry(
            request: #"{"method": "POST", "url": "https://a.example/", "queryString": [], "# + shared + "}",
            response: #"{"status": 201, "statusText": "Created", "# + shared + "}"
        )
        for (version, cookies, headers, headersSize, bodySize) in [
            (entry.request.httpVersion, entry.request.cookies, entry.request.headers, entry.request.headersSize, entry.request.bodySize),
            (entry.response.httpVersion, entry.response.cookies, entry.response.headers, entry.response.headersSize, entry.response.bodySize),
        ] {
            #expect(version == "HTTP/2")
            #expect(cookies == [HAR.NameValue(name: "c", value: "1")])
            #expect(headers == [HAR.NameValue(name: "h", value: "2")])
            #expect(headersSize == 30 && bodySize == 4)
        }
        #expect(entry.request.method == "POST" && entry.response.status == 201 && entry.response.statusText == "Created")
    }
}
