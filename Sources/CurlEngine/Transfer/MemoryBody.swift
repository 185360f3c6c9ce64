import Foundation
import Synchronization

/// A request body that is `Data` in memory, where libcurl reads it:
/// CURLOPT_POSTFIELDS points at `pointer` (CURLOPT_POSTFIELDSIZE_LARGE
/// gives the size), so the body never passes through our read callback.
/// Not CURLOPT_COPYPOSTFIELDS: that copies the whole body per transfer.
///
/// libcurl 7.88.1 still copies the bytes once itself: a body under 64 KiB
/// into the request's own buffer (head and body go out in one send), a
/// larger one into its upload buffer, `CURLOPT_UPLOAD_BUFFERSIZE` at a time
/// (lib/http.c `readmoredata`). What goes is our callback's copy, its call
/// per buffer and its rewinds: a redirect, an authentication round or a
/// reused connection that closed simply sends from the pointer again.
///
/// The pointer stays valid until `release()`, which the transfer calls
/// once libcurl has let go of the handle (after `curl_multi_remove_handle`)
/// and after clearing CURLOPT_POSTFIELDS, so an idle or reused handle never
/// keeps a dangling pointer:
/// - A body of `borrowingThreshold` bytes or more is the Data's own
///   storage, borrowed. Foundation keeps a Data longer than its inline
///   capacity (14 bytes on 64-bit) in one heap allocation that moves only
///   when a Data holding it is mutated in place, which copy-on-write allows
///   only to a sole owner. `storage` here is a second owner and is never
///   mutated, so the bytes stay where they are while it lives.
/// - A smaller body (its bytes may live inside the Data value itself) is
///   copied into one allocation kept for the transfer: under 1 KiB, one
///   small malloc and memcpy.
struct MemoryBody {
    /// Below this many bytes the body is copied rather than borrowed.
    static let borrowingThreshold = 1024

    /// Where libcurl reads the body (never written through: libcurl takes
    /// CURLOPT_POSTFIELDS as `void *` but only reads it).
    let pointer: UnsafeMutableRawPointer
    let count: Int
    /// Keeps the borrowed bytes alive and unmoved.
    private let storage: Data?
    /// Our own copy of a small body, freed by `release()`.
    private let copy: UnsafeMutableRawPointer?

    init(_ data: Data) {
        let length = data.count
        count = length
        if length >= Self.borrowingThreshold,
            let base = data.withUnsafeBytes({ $0.baseAddress })
        {
            pointer = UnsafeMutableRawPointer(mutating: base)
            storage = data
            copy = nil
        } else {
            // At least one byte: libcurl gets a valid pointer even for an
            // empty body (it reads none of it).
            let bytes = UnsafeMutableRawPointer.allocate(byteCount: max(length, 1), alignment: 1)
            data.withUnsafeBytes { source in
                if let base = source.baseAddress, length > 0 { bytes.copyMemory(from: base, byteCount: length) }
            }
            pointer = bytes
            storage = nil
            copy = bytes
        }
    }

    /// Frees the copy, if any. Only once libcurl no longer points here.
    func release() {
        copy?.deallocate()
    }
}

/// Bytes of `Data` bodies that went through the engine's read callback
/// (copied there). Stays 0: such bodies go to libcurl as CURLOPT_POSTFIELDS
/// (`MemoryBody`); the tests check it after uploads from memory.
package enum MemoryBodyReadCallbackCount {
    private static let bytes = Atomic<Int>(0)

    package static var bytesCopied: Int { bytes.load(ordering: .relaxed) }

    static func add(_ count: Int) {
        bytes.add(count, ordering: .relaxed)
    }
}
