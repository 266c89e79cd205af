// tests/fuzz/fuzz_common.h: what both modes of chan_fuzz share: reading the
// fuzzer's bytes, reporting a mismatch, and running a select whose cases are
// chosen at run time.
#ifndef GORT_TESTS_FUZZ_FUZZ_COMMON_H_
#define GORT_TESTS_FUZZ_FUZZ_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gort/gort.h"

namespace gortfuzz {

// Reads the input a byte at a time; zeros once it runs out.
class ByteReader {
 public:
  // Reads from [data, data + size).
  ByteReader(const std::uint8_t* data, std::size_t size)
      : data_(data), size_(size) {}
  // The next byte, or 0 past the end.
  std::uint8_t Next() { return pos_ < size_ ? data_[pos_++] : 0; }
  // The next byte reduced to [0, n).
  int Below(int n) { return Next() % n; }
  // True when every byte has been read.
  bool Done() const { return pos_ >= size_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// Reports a disagreement with the model and crashes, so libFuzzer keeps
// the input.
[[noreturn]] inline void Fail(const std::string& what) {
  std::fprintf(stderr, "chan_fuzz: MODEL MISMATCH: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// Fails unless cond holds.
inline void Check(bool cond, const std::string& what) {
  if (!cond) Fail(what);
}

// One case of a select chosen at run time.
struct CaseSpec {
  bool send = false;  // send `value`, else receive
  int ch = 0;         // index into the channel list
  int value = 0;      // what a send case sends
};

// What a receive case stored (value starts as a sentinel, so "not
// written" and "zero value" differ).
struct CaseResult {
  int value = -7;
  bool ok = false;
};

// Calls f with the gort case object for spec (a send or a receive case).
template <class F>
int WithCase(const gort::Chan<int>& c, const CaseSpec& spec, CaseResult* r,
             F&& f) {
  if (spec.send) {
    auto op = gort::SendCase(c, spec.value);
    return f(op);
  }
  auto op = gort::RecvCase(c, &r->value, &r->ok);
  return f(op);
}

// Runs a select over n (1 or 2) cases, with a default case if dflt;
// returns the chosen case's index, or -1 for the default. Panics propagate.
inline int RunSelect(const std::vector<gort::Chan<int>>& chans,
                     const CaseSpec* cs, int n, bool dflt, CaseResult* out) {
  int arg;
  if (n == 1) {
    arg = WithCase(chans[cs[0].ch], cs[0], &out[0], [&](auto& a) {
      return dflt ? gort::Select(a, gort::DefaultCase()) : gort::Select(a);
    });
  } else {
    arg = WithCase(chans[cs[0].ch], cs[0], &out[0], [&](auto& a) {
      return WithCase(chans[cs[1].ch], cs[1], &out[1], [&](auto& b) {
        return dflt ? gort::Select(a, b, gort::DefaultCase())
                    : gort::Select(a, b);
      });
    });
  }
  return arg == n ? -1 : arg;
}

// Mode (a): one goroutine plus helpers, every result predicted exactly.
void RunDeterministic(ByteReader& in);
// Mode (b): several goroutines; checks what holds in every interleaving.
void RunConcurrent(ByteReader& in);

}  // namespace gortfuzz

#endif  // GORT_TESTS_FUZZ_FUZZ_COMMON_H_
