import Testing

@testable import CurlEngine

/// How much one recv may read, chosen from the transfers already running on
/// the I/O thread's session (the measurements are in `ReceiveBufferSize`).
@Suite struct ReceiveBufferSizeTests {
    @Test func aTransferAlone_reads64KiB() {
        #expect(ReceiveBufferSize.for(transfersAlreadyRunning: 0) == 64 * 1024)
    }

    @Test func aTransferBesideOthers_readsAtLibcurlsDefault() {
        #expect(ReceiveBufferSize.for(transfersAlreadyRunning: 1) == ReceiveBufferSize.libcurlDefault)
        #expect(ReceiveBufferSize.for(transfersAlreadyRunning: 63) == 16 * 1024)
    }
}
