// pkg/pprof/profile.h: a profile in pprof's profile.proto (Go's
// runtime/pprof proto.go: profileBuilder), written with a protobuf encoder
// of its own (the few wire types the format uses) and gzipped with zlib
// where the build found it (else left uncompressed, which `go tool pprof`
// reads as well). Frames are symbolized into the profile (function, file,
// line, inlined calls as lines of one location), so pprof needs no binary.
#ifndef GORT_PKG_PPROF_PROFILE_H_
#define GORT_PKG_PPROF_PROFILE_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gort::pprof {

// protoBuf mirrors Go's protobuf (runtime/pprof/protobuf.go:8)
// (runtime/pprof/protobuf.go): varint, length-delimited and packed fields
// appended to a byte string.
class protoBuf {
 public:
  void varint(std::uint64_t v);
  void uint64(int field, std::uint64_t v);  // wire type 0
  void int64(int field, std::int64_t v) {
    uint64(field, static_cast<std::uint64_t>(v));
  }
  void string(int field, const std::string& s);  // wire type 2
  void bytes(int field, const protoBuf& m) { string(field, m.data); }
  void packed(int field, const std::vector<std::uint64_t>& v);

  std::string data;
};

// profileBuilder mirrors Go's profileBuilder (runtime/pprof/proto.go:28)
// (runtime/pprof/proto.go): sample and period types, samples of return
// addresses, and the locations, functions and strings they need.
class profileBuilder {
 public:
  // sampleTypes: (type, unit) of each value; period: (type, unit), period.
  profileBuilder(std::vector<std::pair<std::string, std::string>> sampleTypes,
                 std::pair<std::string, std::string> periodType,
                 std::int64_t period);
  // add appends a sample: its values, its stack, innermost first, and its
  // labels (string-valued, as Go writes them).
  void add(const std::vector<std::int64_t>& values,
           const std::vector<std::uintptr_t>& pcs,
           const std::vector<std::pair<std::string, std::string>>& labels = {});
  // build: the encoded profile (time_nanos and duration_nanos given),
  // gzipped when zlib is available.
  std::string build(std::int64_t timeNanos, std::int64_t durationNanos);

 private:
  std::int64_t str(const std::string& s);
  std::uint64_t location(std::uintptr_t pc);
  std::uint64_t function(const std::string& name, const std::string& file);

  protoBuf pb_;
  std::map<std::string, std::int64_t> strings_;
  std::vector<std::string> stringList_;
  std::map<std::uintptr_t, std::uint64_t> locs_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> funcs_;
  protoBuf body_;  // samples, locations, functions as they come
  std::int64_t period_;
  std::pair<std::string, std::string> periodType_;
};

// gzip compresses data (one gzip member, as compress/gzip in Go writes); data
// unchanged if zlib is not available.
std::string gzip(const std::string& data);

}  // namespace gort::pprof

#endif  // GORT_PKG_PPROF_PROFILE_H_
