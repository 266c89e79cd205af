// tests/fuzz/chan_fuzz.cc: a libFuzzer harness that turns its input into a
// random program of goroutines, channels, select, close, spawn, Gosched and
// GOMAXPROCS changes, runs it in one gort::Run, and checks the outcome
// against a model of Go's semantics (docs/reliability.md, "Fuzzing").
//
// The first byte picks the mode: even, deterministic (det_mode.cc: one main
// goroutine and helpers whose results the model predicts exactly); odd,
// concurrent (conc_mode.cc: several goroutines; properties that hold in
// every interleaving). A mismatch prints "chan_fuzz: MODEL MISMATCH" and
// aborts; a hang is caught by libFuzzer's -timeout; ASan, UBSan and
// LeakSanitizer watch the runtime throughout. Each input is a whole Run:
// Runs are repeatable and each starts clean.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  if (size == 0) return 0;
  gortfuzz::ByteReader in(data + 1, size - 1);
  if (data[0] % 2 == 0) {
    gortfuzz::RunDeterministic(in);
  } else {
    gortfuzz::RunConcurrent(in);
  }
  return 0;
}
