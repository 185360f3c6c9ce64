import Foundation

extension Session {
    /// A TCP stream to `hostname`:`port`, as `URLSession.streamTask(withHostName:port:)`.
    public nonisolated func streamTask(withHostName hostname: String, port: Int) -> StreamTask {
        StreamTask(connection: StreamConnection(
            identifier: context.nextRefusedIdentifier(), context: context, host: hostname, port: port))
    }
}
