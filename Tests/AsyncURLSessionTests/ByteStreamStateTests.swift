import Foundation
import Testing

@testable import AsyncURLSession

/// `ByteStreamState` (a stream task's reads, buffer and closed sides) as a
/// table of transitions, without a connection.
@Suite struct ByteStreamStateTests {
    /// A reader whose continuation is never resumed here: the state only
    /// keeps it. Made inside `withCheckedThrowingContinuation`, which the
    /// test then leaves by resuming it itself.
    static func withReader<T>(
        serial: Int, min: Int, max: Int, _ body: (ByteStreamClient.Reader) -> T
    ) async -> T {
        var result: T?
        _ = try? await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, Bool), any Error>) in
            let reader = ByteStreamClient.Reader(serial: serial, minLength: min, maxLength: max, continuation: continuation)
            let value = body(reader)
            result = value
            continuation.resume(returning: (Data(), true))
        }
        return result!
    }

    static func bytes(_ text: String, into state: inout ByteStreamState) -> [ByteStreamState.Served]? {
        Data(text.utf8).withUnsafeBytes { state.received($0) }
    }

    @Test func aRead_isServedFromTheBuffer_whenEnoughIsThere() async {
        var state = ByteStreamState()
        _ = Self.bytes("hello", into: &state)
        let taken = await Self.withReader(serial: 1, min: 3, max: 4) { state.read($0) }
        #expect(taken.map { String(decoding: $0.0, as: UTF8.self) } == "hell")
        #expect(taken?.1 == false)
        #expect(state.buffer.count == 1)
        #expect(state.readers.isEmpty)
    }

    @Test func aRead_waits_untilItsMinimumArrives() async {
        var state = ByteStreamState()
        let taken = await Self.withReader(serial: 1, min: 4, max: 10) { state.read($0) }
        #expect(taken == nil)
        #expect(state.readers.count == 1)
        #expect(Self.bytes("ab", into: &state)?.isEmpty == true)
        let served = Self.bytes("cd", into: &state)
        #expect(served?.count == 1)
        #expect(served?.first.map { String(decoding: $0.1.0, as: UTF8.self) } == "abcd")
        #expect(state.readers.isEmpty)
    }

    @Test func thePeersCleanClose_servesWhatIsBuffered_thenTheEnd() async {
        var state = ByteStreamState()
        _ = await Self.withReader(serial: 1, min: 10, max: 10) { state.read($0) }
        _ = Self.bytes("abc", into: &state)
        let served = state.peerClosed()
        #expect(served.count == 1)
        #expect(served.first?.1.1 == true)  // at the end
        #expect(String(decoding: served.first?.1.0 ?? Data(), as: UTF8.self) == "abc")
    }

    @Test func closeRead_dropsTheBuffer_endsTheReads_andRefusesLaterBytes() async {
        var state = ByteStreamState()
        _ = Self.bytes("abc", into: &state)
        _ = await Self.withReader(serial: 1, min: 10, max: 10) { state.read($0) }
        let ended = state.closeRead()
        #expect(ended.count == 1)
        #expect(state.buffer.isEmpty)
        #expect(state.readers.isEmpty)
        #expect(Self.bytes("late", into: &state) == nil)
    }

    @Test func anExpiredRead_isTakenOut_byItsSerial() async {
        var state = ByteStreamState()
        _ = await Self.withReader(serial: 7, min: 1, max: 1) { state.read($0) }
        let other = state.expireReader(serial: 8)
        let expired = state.expireReader(serial: 7)
        #expect(other == nil)
        #expect(expired?.serial == 7)
        #expect(state.readers.isEmpty)
    }

    @Test func eachSidesClose_isReportedOnce_andTheEndNever() {
        var state = ByteStreamState()
        let told = [
            state.shouldReport(.readClosed), state.shouldReport(.readClosed),
            state.shouldReport(.writeClosed), state.shouldReport(.writeClosed),
            state.shouldReport(.ended(nil)),
        ]
        #expect(told == [true, false, true, false, false])
    }

    @Test func aFailure_takesEveryWaitingRead() async {
        var state = ByteStreamState()
        _ = await Self.withReader(serial: 1, min: 5, max: 5) { state.read($0) }
        _ = await Self.withReader(serial: 2, min: 5, max: 5) { state.read($0) }
        let failed = state.takeReadersOnFailure()
        #expect(failed.map(\.serial) == [1, 2])
        #expect(state.readers.isEmpty)
    }
}
