import Foundation
import FoundationNetworking

/// Legacy code in both styles: a completion handler for small resources,
/// a delegate that collects the body of large ones.
final class LegacyClient: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: `bodies` and `handlers` are only touched on the session's
    // serial delegate queue.
    private var session: URLSession!
    private var bodies: [Int: Data] = [:]
    private var handlers: [Int: @Sendable (Result<Data, any Error>) -> Void] = [:]

    override init() {
        super.init()
        session = URLSession(configuration: .default, delegate: self, delegateQueue: nil)
    }

    func fetchStatus(_ url: URL, completion: @escaping @Sendable (Int?) -> Void) {
        session.dataTask(with: url) { _, response, _ in
            completion((response as? HTTPURLResponse)?.statusCode)
        }.resume()
    }

    func load(_ url: URL, completion: @escaping @Sendable (Result<Data, any Error>) -> Void) {
        let task = session.dataTask(with: url)
        session.delegateQueue.addOperation {
            self.handlers[task.taskIdentifier] = completion
            task.resume()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        bodies[dataTask.taskIdentifier, default: Data()].append(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let body = bodies.removeValue(forKey: task.taskIdentifier) ?? Data()
        let handler = handlers.removeValue(forKey: task.taskIdentifier)
        handler?(error.map { .failure($0) } ?? .success(body))
    }

    func close() {
        session.finishTasksAndInvalidate()
    }
}
