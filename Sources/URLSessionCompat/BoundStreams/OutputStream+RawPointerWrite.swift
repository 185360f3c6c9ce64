#if canImport(FoundationNetworking)
import Foundation

extension OutputStream {
    /// Writes from a raw pointer, as code written for Apple does
    /// (`data.withUnsafeBytes { stream.write($0.baseAddress!, maxLength: $0.count) }`),
    /// where swift-corelibs-foundation only takes `UnsafePointer<UInt8>`.
    ///
    /// Disfavored so that every call that already compiled on Linux (a typed
    /// pointer, `&array`, an array) keeps choosing the typed overload.
    @_disfavoredOverload
    public func write(_ buffer: UnsafeRawPointer, maxLength len: Int) -> Int {
        // Binding is only defined for a non-negative count; a negative one
        // is passed on as is for the stream to refuse.
        guard len > 0 else {
            return write(buffer.assumingMemoryBound(to: UInt8.self), maxLength: len)
        }
        // Bound to bytes only for the call: the memory may hold any type.
        return buffer.withMemoryRebound(to: UInt8.self, capacity: len) { bytes in
            write(bytes, maxLength: len)
        }
    }
}
#endif
