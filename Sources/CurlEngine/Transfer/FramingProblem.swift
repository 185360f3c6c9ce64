/// Why the end of a response's body cannot be known for sure. Either is an
/// unrecoverable framing error (RFC 9110 §8.6, RFC 9112 §6.3): a response
/// smuggled behind the body could answer the next request, so the transfer
/// fails and its connection is closed, never reused.
package enum FramingProblem: Sendable, Equatable {
    /// Content-Length values that differ, in one field ("4, 10") or in
    /// several. A list of equal values ("5, 5") is taken as one.
    case conflictingContentLengths
    /// Content-Length beside Transfer-Encoding: RFC 9112 lets the encoding
    /// win but says such a message "ought to be handled as an error", and
    /// the peers' parsers (llhttp, AsyncHTTPClient) refuse it.
    case contentLengthWithTransferEncoding

    /// What the task's error says, with the fields as received.
    package func reason(contentLengths: [String]) -> String {
        let received = contentLengths.map { "Content-Length: \($0)" }.joined(separator: ", ")
        switch self {
        case .conflictingContentLengths:
            return "The response's Content-Length values disagree (\(received)), so where its body ends cannot "
                + "be known; it was refused and its connection closed (RFC 9112 §6.3)."
        case .contentLengthWithTransferEncoding:
            return "The response has both Transfer-Encoding and \(received), so where its body ends cannot be "
                + "known for sure; it was refused and its connection closed (RFC 9112 §6.3)."
        }
    }
}
