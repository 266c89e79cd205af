// pkg/pprof/profile.cc: the profile.proto encoder and builder (Go's
// runtime/pprof protobuf.go and proto.go); see profile.h. Field numbers are
// profile.proto's (github.com/google/pprof/proto/profile.proto).
#include "profile.h"

#if defined(GORT_HAVE_ZLIB)
#include <zlib.h>
#endif

#include "os/traceback_os.h"

namespace gort::pprof {

namespace {

// profile.proto's field numbers.
enum : int {
  kProfileSampleType = 1,
  kProfileSample = 2,
  kProfileMapping = 3,
  kProfileLocation = 4,
  kProfileFunction = 5,
  kProfileStringTable = 6,
  kProfileTimeNanos = 9,
  kProfileDurationNanos = 10,
  kProfilePeriodType = 11,
  kProfilePeriod = 12,
  kValueTypeType = 1,
  kValueTypeUnit = 2,
  kSampleLocation = 1,
  kSampleValue = 2,
  kSampleLabel = 3,
  kLabelKey = 1,
  kLabelStr = 2,
  kMappingID = 1,
  kMappingHasFunctions = 7,
  kLocationID = 1,
  kLocationMappingID = 2,
  kLocationAddress = 3,
  kLocationLine = 4,
  kLineFunctionID = 1,
  kLineLine = 2,
  kFunctionID = 1,
  kFunctionName = 2,
  kFunctionSystemName = 3,
  kFunctionFilename = 4,
};

constexpr int kMaxInlined = 16;

// kMappingAll: the id of the one mapping every location names (below).
constexpr std::uint64_t kMappingAll = 1;

}  // namespace

void protoBuf::varint(std::uint64_t v) {
  while (v >= 0x80) {
    data.push_back(static_cast<char>(0x80 | (v & 0x7f)));
    v >>= 7;
  }
  data.push_back(static_cast<char>(v));
}

void protoBuf::uint64(int field, std::uint64_t v) {
  varint(static_cast<std::uint64_t>(field) << 3);
  varint(v);
}

void protoBuf::string(int field, const std::string& s) {
  varint(static_cast<std::uint64_t>(field) << 3 | 2);
  varint(s.size());
  data += s;
}

void protoBuf::packed(int field, const std::vector<std::uint64_t>& v) {
  protoBuf p;
  for (std::uint64_t x : v) p.varint(x);
  bytes(field, p);
}

profileBuilder::profileBuilder(
    std::vector<std::pair<std::string, std::string>> sampleTypes,
    std::pair<std::string, std::string> periodType, std::int64_t period)
    : period_(period), periodType_(std::move(periodType)) {
  str("");
  for (const auto& [type, unit] : sampleTypes) {
    protoBuf vt;
    vt.int64(kValueTypeType, str(type));
    vt.int64(kValueTypeUnit, str(unit));
    body_.bytes(kProfileSampleType, vt);
  }
}

std::int64_t profileBuilder::str(const std::string& s) {
  auto [it, fresh] =
      strings_.emplace(s, static_cast<std::int64_t>(stringList_.size()));
  if (fresh) stringList_.push_back(s);
  return it->second;
}

std::uint64_t profileBuilder::function(const std::string& name,
                                       const std::string& file) {
  auto [it, fresh] = funcs_.emplace(std::make_pair(name, file), 0);
  if (!fresh) return it->second;
  it->second = funcs_.size();
  protoBuf f;
  f.uint64(kFunctionID, it->second);
  f.int64(kFunctionName, str(name));
  f.int64(kFunctionSystemName, str(name));
  f.int64(kFunctionFilename, str(file));
  body_.bytes(kProfileFunction, f);
  return it->second;
}

// location: the id of pc's location, its lines the frames symbolize gives
// (inlined calls first, as profile.proto orders them).
std::uint64_t profileBuilder::location(std::uintptr_t pc) {
  auto [it, fresh] = locs_.emplace(pc, 0);
  if (!fresh) return it->second;
  it->second = locs_.size();
  os::Symbol syms[kMaxInlined];
  int n = os::symbolize(pc, syms, kMaxInlined);
  protoBuf loc;
  loc.uint64(kLocationID, it->second);
  loc.uint64(kLocationMappingID, kMappingAll);
  loc.uint64(kLocationAddress, pc);
  for (int i = 0; i < n; i++) {
    protoBuf line;
    line.uint64(kLineFunctionID, function(syms[i].function, syms[i].file));
    line.int64(kLineLine, syms[i].line);
    loc.bytes(kLocationLine, line);
  }
  body_.bytes(kProfileLocation, loc);
  return it->second;
}

void profileBuilder::add(
    const std::vector<std::int64_t>& values,
    const std::vector<std::uintptr_t>& pcs,
    const std::vector<std::pair<std::string, std::string>>& labels) {
  std::vector<std::uint64_t> ids;
  ids.reserve(pcs.size());
  for (std::uintptr_t pc : pcs) ids.push_back(location(pc));
  std::vector<std::uint64_t> vals;
  for (std::int64_t v : values) vals.push_back(static_cast<std::uint64_t>(v));
  protoBuf s;
  s.packed(kSampleLocation, ids);
  s.packed(kSampleValue, vals);
  for (const auto& [k, v] : labels) {
    protoBuf l;
    l.int64(kLabelKey, str(k));
    l.int64(kLabelStr, str(v));
    s.bytes(kSampleLabel, l);
  }
  body_.bytes(kProfileSample, s);
}

std::string profileBuilder::build(std::int64_t timeNanos,
                                  std::int64_t durationNanos) {
  protoBuf out = body_;
  // One mapping for the whole address space, as Go's proto.go fakes one
  // where it cannot read the process's maps, marked has_functions: every
  // location is symbolized here already, or cannot be (a PC in the vdso
  // that no symbol covers, say). Without it `go tool pprof` invents an
  // unsymbolized mapping and, for a profile fetched over HTTP, asks the
  // server's /debug/pprof/symbol about any location without a line, then
  // fails on the answer.
  protoBuf m;
  m.uint64(kMappingID, kMappingAll);
  m.uint64(kMappingHasFunctions, 1);
  out.bytes(kProfileMapping, m);
  protoBuf pt;
  pt.int64(kValueTypeType, str(periodType_.first));
  pt.int64(kValueTypeUnit, str(periodType_.second));
  out.bytes(kProfilePeriodType, pt);
  out.int64(kProfilePeriod, period_);
  out.int64(kProfileTimeNanos, timeNanos);
  out.int64(kProfileDurationNanos, durationNanos);
  for (const std::string& s : stringList_) out.string(kProfileStringTable, s);
  return gzip(out.data);
}

std::string gzip(const std::string& data) {
#if defined(GORT_HAVE_ZLIB)
  z_stream zs{};
  // 15 + 16: a 32 KiB window with a gzip header and trailer.
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return data;
  }
  std::string out(deflateBound(&zs, data.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return rc == Z_STREAM_END ? out : data;
#else
  return data;
#endif
}

}  // namespace gort::pprof
