#if canImport(FoundationNetworking)
@testable import URLSessionCompat
import Foundation
import Synchronization
import Testing
import TestSupport

/// Delegate events of bound pairs: Apple's streaming-upload pattern as it
/// is written for Apple, input events on a queue and on a run loop, and
/// events of a stream scheduled nowhere.
@Suite struct BoundStreamEventTests {
    @Test func theApplePatternFeedsAReaderThroughASmallPair() async throws {
        try await withTimeLimit(30) {
            let payload = testPattern(count: 256 << 10)
            let pair = try BoundPair(bufferSize: 1024)
            let finished = OneShot<Bool>()
            let writer = AppleStyleBodyWriter(outputStream: pair.output, body: payload) { finished.give($0) }
            writer.start()
            let outcome = await onThread("reader") { readAll(from: pair.input, chunk: 4096) }
            #expect(await finished.value)
            #expect(outcome.bytes == payload)
            #expect(outcome.last == 0)
            let events = writer.events
            #expect(events.first == .openCompleted, "events: \(events.map(eventName))")
            #expect(!events.contains(.errorOccurred))
            #expect(writer.eventsOffQueue == 0)
            // Edge-triggered: no more space events than writes, plus the one at open.
            #expect(events.filter { $0 == .hasSpaceAvailable }.count <= writer.writes + 1)
            #expect(writer.writes >= payload.count / 1024)
        }
    }

    @Test func inputEventsArriveOnTheQueueInOrder() async throws {
        try await withTimeLimit(30) {
            let pair = try BoundPair(bufferSize: 64)
            let queue = DispatchQueue(label: "input events")
            let key = DispatchSpecificKey<Bool>()
            queue.setSpecific(key: key, value: true)
            let reader = DelegateReader(onQueue: { DispatchQueue.getSpecific(key: key) == true })
            pair.input.delegate = reader
            CFReadStreamSetDispatchQueue(pair.input as CFReadStream, queue)
            pair.input.open()

            let payload = testPattern(count: 1000)
            #expect(await onThread("writer") { writeAll(payload, to: pair.output, chunks: [10, 100, 333]) } == 1000)
            let outcome = await reader.finished.value
            #expect(outcome.bytes == payload)
            #expect(outcome.last == 0)
            #expect(outcome.status == .atEnd)
            let events = reader.events
            #expect(events.first == .openCompleted, "events: \(events.map(eventName))")
            #expect(events.last == .endEncountered)
            #expect(events.contains(.hasBytesAvailable))
            #expect(events.filter { $0 == .endEncountered }.count == 1)
            #expect(reader.offTarget == 0)
        }
    }

    @Test(arguments: [RunLoop.Mode.default, .common])
    func aRunLoopScheduleDeliversOnThatRunLoopsThread(mode: RunLoop.Mode) async throws {
        try await withTimeLimit(30) {
            let pair = try BoundPair(bufferSize: 64)
            let opened = OneShot<Bool>()
            // Known by identity: on Linux a name given to a Thread before
            // `start()` is lost (the thread reports its inherited OS name).
            let loopThread = Mutex<ObjectIdentifier?>(nil)
            let reader = DelegateReader(onQueue: { loopThread.withLock { $0 } == ObjectIdentifier(Thread.current) }) { event in
                if event == .openCompleted { opened.give(true) }
            }
            pair.input.delegate = reader
            let loop = Task {
                await onThread("run loop") { () -> Bool in
                    loopThread.withLock { $0 = ObjectIdentifier(Thread.current) }
                    pair.input.schedule(in: .current, forMode: mode)
                    pair.input.open()
                    let deadline = Date().addingTimeInterval(20)
                    // Returns once the reader closes the input (which takes
                    // it off the run loop), or at the deadline.
                    RunLoop.current.run(until: deadline)
                    return Date() < deadline
                }
            }
            // Written once the run loop has delivered `.openCompleted`: later
            // events find it asleep, and reach the delegate only if waking works.
            #expect(await opened.value)
            let payload = testPattern(count: 500)
            #expect(await onThread("writer") { writeAll(payload, to: pair.output, chunks: [50]) } == 500)
            let outcome = await reader.finished.value
            #expect(outcome.bytes == payload)
            #expect(reader.events.last == .endEncountered)
            #expect(reader.offTarget == 0)
            #expect(await loop.value, "the run loop kept running after the stream closed")
        }
    }

    @Test func removingTheStreamFromAnotherThreadLetsItsRunLoopEnd() async throws {
        try await withTimeLimit(30) {
            let pair = try BoundPair(bufferSize: 64)
            let opened = OneShot<Bool>()
            let recorder = EventRecorder { _, event in
                if event == .openCompleted { opened.give(true) }
            }
            pair.output.delegate = recorder
            let runLoop = OneShot<RunLoopHandle>()
            let loop = Task {
                await onThread("run loop") { () -> Bool in
                    runLoop.give(RunLoopHandle(RunLoop.current))
                    pair.output.schedule(in: .current, forMode: .default)
                    pair.output.open()
                    let deadline = Date().addingTimeInterval(20)
                    RunLoop.current.run(until: deadline)
                    return Date() < deadline
                }
            }
            #expect(await opened.value)
            // Asleep by now, or soon: removing the stream must wake it to end.
            await runLoop.value.remove(pair.output, mode: .default)
            #expect(await loop.value, "the run loop kept running after the stream left it")
            // (Also keeps the weakly held delegate alive until here.)
            #expect(recorder.events.first == .openCompleted)
        }
    }

    @Test func aStreamScheduledNowhereStillDeliversItsEvents() async throws {
        try await withTimeLimit(30) {
            let pair = try BoundPair(bufferSize: 64)
            let space = OneShot<Bool>()
            let recorder = EventRecorder { _, event in
                if event == .hasSpaceAvailable { space.give(true) }
            }
            pair.output.delegate = recorder
            // Scheduled on a run loop, then removed from it: back to no schedule.
            pair.output.schedule(in: .main, forMode: .default)
            pair.output.remove(from: .main, forMode: .default)
            pair.output.open()
            #expect(await space.value)
            #expect(recorder.events == [.openCompleted, .hasSpaceAvailable])

            // Input side too, delegate set after open (before delivery, as on Apple).
            let bytes = OneShot<Bool>()
            let inputRecorder = EventRecorder { _, event in
                if event == .hasBytesAvailable { bytes.give(true) }
            }
            pair.input.open()
            pair.input.delegate = inputRecorder
            let data: [UInt8] = [1, 2, 3]
            #expect(pair.output.write(data, maxLength: 3) == 3)
            #expect(await bytes.value)
            #expect(inputRecorder.events.contains(.hasBytesAvailable))
        }
    }

    @Test func eventsAreNotRepeatedWhileOneIsWaiting() async throws {
        try await withTimeLimit(30) {
            let pair = try BoundPair(bufferSize: 1024)
            // Held until everything has happened: what waits is then delivered.
            let inputQueue = DispatchQueue(label: "held input events")
            let outputQueue = DispatchQueue(label: "held output events")
            inputQueue.suspend()
            outputQueue.suspend()
            let ended = OneShot<Bool>()
            let inputEvents = EventRecorder { _, event in
                if event == .endEncountered { ended.give(true) }
            }
            let space = OneShot<Bool>()
            let outputEvents = EventRecorder { _, event in
                if event == .hasSpaceAvailable { space.give(true) }
            }
            pair.input.delegate = inputEvents
            pair.output.delegate = outputEvents
            CFReadStreamSetDispatchQueue(pair.input, inputQueue)
            CFWriteStreamSetDispatchQueue(pair.output, outputQueue)
            pair.input.open()
            pair.output.open()
            let ten = [UInt8](repeating: 1, count: 10)
            for _ in 0..<10 { #expect(pair.output.write(ten, maxLength: 10) == 10) }
            var chunk = [UInt8](repeating: 0, count: 60)
            for _ in 0..<5 { #expect(pair.input.read(&chunk, maxLength: 10) == 10) }
            // Ten writes that left space: one space event, after the open.
            outputQueue.resume()
            #expect(await space.value)
            #expect(outputEvents.events == [.openCompleted, .hasSpaceAvailable])
            // Ten writes and five reads that left bytes: one bytes event.
            pair.output.close()
            #expect(pair.input.read(&chunk, maxLength: 60) == 50)
            #expect(pair.input.read(&chunk, maxLength: 60) == 0)
            inputQueue.resume()
            #expect(await ended.value)
            #expect(inputEvents.events == [.openCompleted, .hasBytesAvailable, .endEncountered])
        }
    }

    @Test func aReaderThatReadsOnlyWhenBytesAreAvailable_learnsTheEndOfAnEmptyBody() async throws {
        // swift-openapi-urlsession's test reader: it reads only while
        // `hasBytesAvailable`, else waits for `.hasBytesAvailable`; an
        // output closed with nothing written must still reach its read of 0.
        try await withTimeLimit(30) {
            let pair = try BoundPair(bufferSize: 16)
            let readEnd = OneShot<Int>()
            let reader = EventRecorder { stream, event in
                guard event == .hasBytesAvailable, let input = stream as? InputStream, input.hasBytesAvailable
                else { return }
                var byte: UInt8 = 0
                readEnd.give(input.read(&byte, maxLength: 1))
            }
            pair.input.delegate = reader
            CFReadStreamSetDispatchQueue(pair.input, DispatchQueue(label: "input events"))
            pair.input.open()
            pair.output.open()
            #expect(pair.input.hasBytesAvailable == false)
            pair.output.close()
            #expect(await readEnd.value == 0)
            #expect(pair.input.streamStatus == .atEnd)
        }
    }

    @Test func eventsNeverOverlapEvenOnAConcurrentQueue() async throws {
        try await withTimeLimit(30) {
            let pair = try BoundPair(bufferSize: 16)
            let inside = Mutex((now: 0, most: 0))
            let recorder = EventRecorder { _, _ in
                inside.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                // Stay a little, so an overlapping delivery would be caught.
                for _ in 0..<1000 { _ = inside.withLock { $0.now } }
                inside.withLock { $0.now -= 1 }
            }
            pair.output.delegate = recorder
            CFWriteStreamSetDispatchQueue(pair.output, DispatchQueue(label: "concurrent", attributes: .concurrent))
            let payload = testPattern(count: 64 << 10)
            async let written = onThread("writer") { writeAll(payload, to: pair.output, chunks: [3, 5, 7]) }
            async let read = onThread("reader") { readAll(from: pair.input, chunk: 11) }
            let (count, outcome) = await (written, read)
            #expect(count == payload.count)
            #expect(outcome.bytes == payload)
            // The events come on the queue, which a busy machine may not
            // have run yet when both ends are done (seen in a full run).
            try await eventually(every: .milliseconds(1)) { inside.withLock { $0.most } >= 1 }
            #expect(inside.withLock { $0.most } == 1)
            #expect(recorder.events.first == .openCompleted)
        }
    }

    @Test func eventsWaitingForARunLoopThatNeverRunsMoveToANewQueue() async throws {
        try await withTimeLimit(30) {
            let pair = try BoundPair(bufferSize: 16)
            let parked = ParkedRunLoopThread()
            let runLoop = await parked.runLoop.value
            let space = OneShot<Bool>()
            let recorder = EventRecorder { _, event in
                if event == .hasSpaceAvailable { space.give(true) }
            }
            pair.output.delegate = recorder
            runLoop.schedule(pair.output, mode: .default)
            pair.output.open()  // its events wait for the parked run loop
            CFWriteStreamSetDispatchQueue(pair.output, DispatchQueue(label: "rescue"))
            #expect(await space.value)
            #expect(recorder.events == [.openCompleted, .hasSpaceAvailable])
            parked.release()
        }
    }

    @Test func settingADispatchQueueOnOtherStreamsDoesNothing() {
        let memory = OutputStream(toMemory: ())
        CFWriteStreamSetDispatchQueue(memory as CFWriteStream, DispatchQueue(label: "unused"))
        let data = InputStream(data: Data([1]))
        CFReadStreamSetDispatchQueue(data, nil)
        let none: InputStream? = nil
        CFReadStreamSetDispatchQueue(none, DispatchQueue(label: "unused"))
        memory.open()
        let bytes: [UInt8] = [5]
        #expect(memory.write(bytes, maxLength: 1) == 1)
    }
}

/// A thread that hands out its run loop and never runs it.
final class ParkedRunLoopThread: Sendable {
    let runLoop = OneShot<RunLoopHandle>()
    private let parked = DispatchSemaphore(value: 0)

    init() {
        let runLoop = runLoop
        let parked = parked
        Thread.detachNewThread {
            runLoop.give(RunLoopHandle(RunLoop.current))
            parked.wait()
        }
    }

    func release() { parked.signal() }
}

/// A run loop of another thread, handed to the test.
///
/// `@unchecked Sendable`: the test only schedules a stream on it and removes
/// it, which CFRunLoop allows from any thread.
struct RunLoopHandle: @unchecked Sendable {
    private let runLoop: RunLoop
    init(_ runLoop: RunLoop) { self.runLoop = runLoop }

    func schedule(_ stream: Stream, mode: RunLoop.Mode) {
        stream.schedule(in: runLoop, forMode: mode)
    }

    func remove(_ stream: Stream, mode: RunLoop.Mode) {
        stream.remove(from: runLoop, forMode: mode)
    }
}

/// Apple's pattern for a streamed upload body (the writing end of a bound
/// pair): delegate on a serial queue set with CFWriteStreamSetDispatchQueue,
/// writes only when there is space, from a raw pointer, on the stream's
/// events. Written as it is for Apple; it must compile unchanged.
///
/// `@unchecked Sendable`: its state is only touched on `queue` (the events
/// run there, and `start()` hops there), as in the Apple code it copies.
final class AppleStyleBodyWriter: NSObject, StreamDelegate, @unchecked Sendable {
    let outputStream: OutputStream
    private let queue = DispatchQueue(label: "AppleStyleBodyWriter")
    private let queueKey = DispatchSpecificKey<Bool>()
    private let body: [UInt8]
    private let finished: @Sendable (Bool) -> Void
    private var offset = 0
    private let log = Mutex<(events: [Stream.Event], offQueue: Int, writes: Int)>(([], 0, 0))

    init(outputStream: OutputStream, body: [UInt8], finished: @escaping @Sendable (Bool) -> Void) {
        self.outputStream = outputStream
        self.body = body
        self.finished = finished
        super.init()
        queue.setSpecific(key: queueKey, value: true)
    }

    var events: [Stream.Event] { log.withLock { $0.events } }
    var eventsOffQueue: Int { log.withLock { $0.offQueue } }
    var writes: Int { log.withLock { $0.writes } }

    func start() {
        queue.async {
            self.outputStream.delegate = self
            CFWriteStreamSetDispatchQueue(self.outputStream as CFWriteStream, self.queue)
            self.outputStream.open()
        }
    }

    func stream(_ aStream: Stream, handle eventCode: Stream.Event) {
        let onQueue = DispatchQueue.getSpecific(key: queueKey) == true
        log.withLock {
            $0.events.append(eventCode)
            if !onQueue { $0.offQueue += 1 }
        }
        switch eventCode {
        case .openCompleted, .hasSpaceAvailable:
            writeMore()
        case .errorOccurred, .endEncountered:
            finished(false)
        default:
            break
        }
    }

    private func writeMore() {
        guard offset < body.count, outputStream.hasSpaceAvailable else { return }
        let bytes = body[offset..<min(offset + 1500, body.count)]
        let written = bytes.withUnsafeBytes { outputStream.write($0.baseAddress!, maxLength: bytes.count) }
        log.withLock { $0.writes += 1 }
        guard written > 0 else { return finished(false) }
        offset += written
        if offset == body.count {
            outputStream.close()
            finished(true)
        }
    }
}

/// An input delegate that reads on `.hasBytesAvailable` until the end.
///
/// `@unchecked Sendable`: `state` is behind a Mutex; the rest are `let`s.
final class DelegateReader: NSObject, StreamDelegate, @unchecked Sendable {
    let finished = OneShot<ReadOutcome>()
    private let state = Mutex<(outcome: ReadOutcome, events: [Stream.Event], offTarget: Int)>((ReadOutcome(), [], 0))
    private let onTarget: @Sendable () -> Bool
    private let onEvent: @Sendable (Stream.Event) -> Void

    init(onQueue: @escaping @Sendable () -> Bool, onEvent: @escaping @Sendable (Stream.Event) -> Void = { _ in }) {
        self.onTarget = onQueue
        self.onEvent = onEvent
    }

    var events: [Stream.Event] { state.withLock { $0.events } }
    var offTarget: Int { state.withLock { $0.offTarget } }

    func stream(_ aStream: Stream, handle eventCode: Stream.Event) {
        let onTarget = onTarget()
        state.withLock {
            $0.events.append(eventCode)
            if !onTarget { $0.offTarget += 1 }
        }
        onEvent(eventCode)
        guard let input = aStream as? InputStream else { return }
        switch eventCode {
        case .hasBytesAvailable:
            var chunk = [UInt8](repeating: 0, count: 37)
            // Reads what is there; never blocks, as it runs only while bytes are.
            while input.hasBytesAvailable {
                let count = input.read(&chunk, maxLength: chunk.count)
                guard count > 0 else { break }
                state.withLock { $0.outcome.bytes += chunk[0..<count] }
            }
        case .endEncountered:
            var byte: UInt8 = 0
            let last = input.read(&byte, maxLength: 1)
            let status = input.streamStatus
            let outcome = state.withLock { state -> ReadOutcome in
                state.outcome.last = last
                state.outcome.status = status
                return state.outcome
            }
            input.close()
            finished.give(outcome)
        default:
            break
        }
    }
}
#endif
