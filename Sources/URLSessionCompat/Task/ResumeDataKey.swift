import AsyncURLSession

/// The `userInfo` key of a failed or cancelled download's resume data, as
/// Apple's `NSURLSessionDownloadTaskResumeData`.
public let NSURLSessionDownloadTaskResumeData: String = URLError.downloadTaskResumeDataKey
