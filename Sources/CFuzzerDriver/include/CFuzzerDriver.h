// libFuzzer's entry for programs with a main of their own (SwiftPM gives
// every executable one). Defined by libFuzzer, which only fuzz builds link
// (-sanitize=fuzzer, see .ci/fuzz); nothing calls it in other builds.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
