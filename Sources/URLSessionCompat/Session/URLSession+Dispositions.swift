extension URLSession {
    /// How a challenge is answered, as Apple's.
    public enum AuthChallengeDisposition: Int, Sendable {
        case useCredential
        case performDefaultHandling
        case cancelAuthenticationChallenge
        case rejectProtectionSpace
    }

    /// What happens to a data task after its response, as Apple's.
    /// (Unlike FoundationNetworking, `.becomeDownload` works.)
    public enum ResponseDisposition: Int, Sendable {
        case cancel
        case allow
        case becomeDownload
    }
}
