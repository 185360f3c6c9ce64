// Scoped imports of FoundationNetworking's classes through this module.
//
// Why: a library on Linux writes `import class URLSessionCompat.URLResponse`
// as it wrote `import class FoundationNetworking.URLResponse`. Foundation on
// Linux declares an unavailable placeholder for each class FoundationNetworking
// took over (`HTTPURLResponse = AnyObject`, ...), and this module re-exports
// both modules, so a scoped import of such a name finds two declarations and
// fails as "ambiguous". A declaration of the module itself shadows what it
// re-exports, so each name below is FoundationNetworking's class under this
// module's name: one candidate, the same type (no conversion anywhere).
//
// Only the classes with a placeholder are here: the adapter declares its own
// URLSession, URLSessionConfiguration, tasks, URLProtocol and stores, and
// FoundationNetworking's structs, enums, protocols and constants have no
// placeholder. `ScopedImportTests` imports every public name of
// FoundationNetworking, scoped, and checks the list against the toolchain's
// FoundationNetworking, so a new declaration cannot regress it.
#if canImport(FoundationNetworking)
import FoundationNetworking

public typealias URLResponse = FoundationNetworking.URLResponse
public typealias HTTPURLResponse = FoundationNetworking.HTTPURLResponse
public typealias CachedURLResponse = FoundationNetworking.CachedURLResponse
public typealias HTTPCookie = FoundationNetworking.HTTPCookie
public typealias URLCredential = FoundationNetworking.URLCredential
public typealias URLProtectionSpace = FoundationNetworking.URLProtectionSpace
public typealias URLAuthenticationChallenge = FoundationNetworking.URLAuthenticationChallenge
#endif
