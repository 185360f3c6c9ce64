// The boundary types are Foundation's (URLRequest, HTTPURLResponse, URLError,
// ...). On Linux they live in FoundationNetworking; re-export it so that
// `import AsyncURLSession` is all a user needs.
@_exported import Foundation
#if canImport(FoundationNetworking)
@_exported import FoundationNetworking
#endif
