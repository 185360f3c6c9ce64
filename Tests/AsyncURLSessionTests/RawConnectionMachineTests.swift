import Testing

@testable import AsyncURLSession

/// The raw connection's state machine on its own, as tables of inputs and
/// answers: no engine, no network.
@Suite struct RawConnectionMachineTests {
    typealias Machine = RawConnectionMachine<Int>
    typealias Phase = Machine.Phase
    static let id = 7

    /// A machine brought to `phase` the way a connection brings it there.
    static func machine(in phase: Phase, high: Int = 100) -> Machine {
        var machine = Machine(highWatermark: high, lowWatermark: high / 2)
        if phase == .idle { return machine }
        let connects = machine.shouldConnect(reconnecting: false)
        #expect(connects)
        machine.connecting(id)
        switch phase {
        case .idle, .connecting: break
        case .handshaking: _ = machine.connected(handshake: true)
        case .open: _ = machine.connected(handshake: false)
        case .closing:
            _ = machine.connected(handshake: false)
            _ = machine.close()
        case .closed: _ = machine.end()
        }
        #expect(machine.phase == phase)
        return machine
    }

    /// `transition` applied to a machine in `phase`: its answer, and the phase after.
    static func apply<Answer>(_ transition: (inout Machine) -> Answer, in phase: Phase) -> (Answer, Phase) {
        var machine = machine(in: phase)
        let answer = transition(&machine)
        return (answer, machine.phase)
    }

    @Test(arguments: [
        (Phase.idle, true), (.connecting, false), (.handshaking, false), (.open, false), (.closing, false), (.closed, false),
    ])
    func shouldConnect_onlyWhenIdle(phase: Phase, connects: Bool) {
        let (connected, after) = Self.apply({ $0.shouldConnect(reconnecting: false) }, in: phase)
        #expect(connected == connects && after == phase)
    }

    @Test(arguments: [
        (Phase.idle, true, Phase.idle), (.connecting, true, .idle), (.handshaking, false, .handshaking),
        (.open, false, .open), (.closing, false, .closing), (.closed, false, .closed),
    ])
    func shouldConnect_reconnecting_restartsOnlyAStoppedConnect(phase: Phase, connects: Bool, after: Phase) {
        let (connected, phaseAfter) = Self.apply({ $0.shouldConnect(reconnecting: true) }, in: phase)
        #expect(connected == connects && phaseAfter == after)
    }

    @Test(arguments: [
        (Phase.idle, Machine.WaitOutcome.wait), (.connecting, .wait), (.handshaking, .wait), (.open, .ready),
        (.closing, .closed), (.closed, .closed),
    ])
    func openWait(phase: Phase, outcome: Machine.WaitOutcome) {
        #expect(Self.machine(in: phase).openWait == outcome)
    }

    @Test(arguments: [
        (false, Machine.OpenAction.resumeOpenWaiters, Phase.open), (true, .handshake, .handshaking),
    ])
    func connected_opensOrHandshakes(handshake: Bool, action: Machine.OpenAction, after: Phase) {
        let (answer, phaseAfter) = Self.apply({ $0.connected(handshake: handshake) }, in: .connecting)
        #expect(answer == action && phaseAfter == after)
    }

    @Test(arguments: [Phase.idle, .handshaking, .open, .closing, .closed])
    func connected_outsideConnecting_doesNothing(phase: Phase) {
        let (answer, after) = Self.apply({ $0.connected(handshake: false) }, in: phase)
        #expect(answer == .none && after == phase)
    }

    @Test(arguments: [
        (Phase.idle, Machine.OpenAction.none, Phase.idle), (.connecting, .none, .connecting),
        (.handshaking, .resumeOpenWaiters, .open), (.open, .none, .open), (.closing, .none, .closing),
        (.closed, .none, .closed),
    ])
    func handshakeSucceeded(phase: Phase, action: Machine.OpenAction, after: Phase) {
        let (answer, phaseAfter) = Self.apply({ $0.handshakeSucceeded() }, in: phase)
        #expect(answer == action && phaseAfter == after)
    }

    @Test(arguments: [
        (Phase.idle, Machine.CloseAction.cancelConnect(nil), Phase.idle),
        (.connecting, .cancelConnect(id), .connecting), (.handshaking, .cancelConnect(id), .handshaking),
        (.open, .tellPeer(id), .closing), (.closing, .none, .closing), (.closed, .none, .closed),
    ])
    func close(phase: Phase, action: Machine.CloseAction, after: Phase) {
        let (answer, phaseAfter) = Self.apply({ $0.close() }, in: phase)
        #expect(answer == action && phaseAfter == after)
    }

    @Test(arguments: [
        (Phase.idle, Machine.EndAction.ended(wasOpen: false)), (.connecting, .ended(wasOpen: false)),
        (.handshaking, .ended(wasOpen: false)), (.open, .ended(wasOpen: true)), (.closing, .ended(wasOpen: true)),
        (.closed, .none),
    ])
    func end_once(phase: Phase, action: Machine.EndAction) {
        var machine = Self.machine(in: phase)
        let answer = machine.end()
        #expect(answer == action)
        #expect(machine.phase == .closed)
        let again = machine.end()
        #expect(again == .none)
    }

    @Test(arguments: [
        (Phase.idle, false), (.connecting, true), (.handshaking, true), (.open, true), (.closing, true), (.closed, false),
    ])
    func isRunning(phase: Phase, running: Bool) {
        #expect(Self.machine(in: phase).isRunning == running)
    }

    @Test(arguments: [
        (Phase.idle, false, false), (.connecting, false, false), (.handshaking, false, false), (.handshaking, true, true),
        (.open, false, true), (.open, true, false), (.closing, false, false), (.closed, false, false),
    ])
    func queue_onlyWhereSending(phase: Phase, handshake: Bool, sends: Bool) {
        var machine = Self.machine(in: phase)
        let queued = machine.queue(10, handshake: handshake) != nil
        #expect(queued == sends)
        #expect(machine.bytesQueued == (sends ? 10 : 0))
    }

    @Test func queue_andWrote_countTheBacklog() {
        var machine = Self.machine(in: .open)
        let first = machine.queue(10)
        let second = machine.queue(5)
        #expect(first?.id == Self.id && first?.end == 10)
        #expect(second?.id == Self.id && second?.end == 15)
        #expect(machine.backlog == 15)
        machine.wrote(totalBytes: 12)
        #expect(machine.backlog == 3)
        machine.wrote(totalBytes: 11)  // never backwards
        #expect(machine.bytesWritten == 12)
    }

    /// (buffered after a read, keep reading?) then (buffered after a take, resume?).
    @Test(arguments: [
        (99, true, 10, false), (100, false, 60, false), (100, false, 50, false), (150, false, 49, true), (0, true, 0, false),
    ])
    func backpressure_pausesAtHigh_resumesBelowLow(received: Int, keepReading: Bool, drained: Int, resumes: Bool) {
        var machine = Self.machine(in: .open)
        let kept = machine.received(buffered: received)
        #expect(kept == keepReading)
        #expect(machine.readPaused == !keepReading)
        let resumed = machine.drained(buffered: drained)
        #expect((resumed == Self.id) == resumes)
        if resumes { #expect(!machine.readPaused) }
        let stillPaused = machine.readPaused
        let last = machine.drained(buffered: 0)
        #expect(last == (stillPaused ? Self.id : nil))
    }

    @Test func resumeReading_onlyWhenPaused() {
        var machine = Self.machine(in: .open)
        let early = machine.resumeReading()
        #expect(early == nil)
        let kept = machine.received(buffered: 100)
        #expect(!kept)
        let resumed = machine.resumeReading()
        #expect(resumed == Self.id)
        #expect(!machine.readPaused)
    }

    @Test func watermarks_areClamped() {
        let machine = Machine(highWatermark: 0, lowWatermark: 5)
        #expect(machine.highWatermark == 1)
        #expect(machine.lowWatermark == 1)
    }
}
