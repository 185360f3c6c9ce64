import AsyncURLSession
import Foundation

/// `fetch ws://...` or `wss://...`: each line of standard input goes out as
/// a text message, each message received is printed (binary ones as their
/// size); end of input closes the connection normally.
struct WebSocketConsole {
    let silent: Bool

    func run(_ socket: WebSocketTask) async throws {
        socket.resume()
        let printer = Task {
            for try await message in socket.messages {
                switch message {
                case .string(let text): print(text)
                case .data(let data): print("<\(data.count) bytes>")
                }
            }
        }
        let sender = Task.detached {
            while let line = readLine(strippingNewline: true) {
                try await socket.send(.string(line))
            }
            socket.cancel(with: .normalClosure, reason: nil)
        }
        do {
            try await printer.value
        } catch {
            sender.cancel()
            throw error
        }
        sender.cancel()
        if !silent {
            let reason = socket.closeReason.map { String(decoding: $0, as: UTF8.self) } ?? ""
            FileHandle.standardError.write(Data("closed: \(socket.closeCode.rawValue) \(reason)\n".utf8))
        }
    }
}
