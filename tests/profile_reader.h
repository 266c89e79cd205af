// tests/profile_reader.h: reads back a profile.proto that pkg/pprof wrote
// (gunzipped with zlib when it is gzipped, where the test has zlib; without,
// as pkg/pprof writes it then, uncompressed): each sample's values, the
// function names of its stack (innermost first, inlined calls expanded) and
// its labels. Just the fields the writer uses; an independent decoder, so a
// writer bug does not cancel out.
#ifndef GORT_TESTS_PROFILE_READER_H_
#define GORT_TESTS_PROFILE_READER_H_

#if defined(GORT_TEST_HAVE_ZLIB)
#include <zlib.h>
#endif

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gort_test {

struct ProfSample {
  std::vector<std::int64_t> values;
  std::vector<std::string> functions;  // innermost first
  std::map<std::string, std::string> labels;
};

struct Profile {
  std::vector<std::pair<std::string, std::string>> sampleTypes;
  std::pair<std::string, std::string> periodType;
  std::int64_t period = 0;
  std::vector<ProfSample> samples;
  // locationsLeftToPprof: locations that `go tool pprof` would try to
  // symbolize again (no mapping, or one not marked has_functions): over
  // HTTP it asks the server's /debug/pprof/symbol for them.
  int locationsLeftToPprof = 0;
};

namespace profile_reader {

inline std::string gunzip(const std::string& in) {
  if (in.size() < 2 || static_cast<unsigned char>(in[0]) != 0x1f) return in;
#if !defined(GORT_TEST_HAVE_ZLIB)
  throw std::runtime_error("gzipped, and no zlib here");
#else
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) throw std::runtime_error("inflate");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buf[65536];
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      throw std::runtime_error("bad gzip");
    }
    out.append(buf, sizeof buf - zs.avail_out);
  } while (rc != Z_STREAM_END);
  inflateEnd(&zs);
  return out;
#endif
}

// Field: one protobuf field; v the varint, or s the bytes.
struct Field {
  int num = 0;
  bool bytes = false;  // wire type 2
  std::uint64_t v = 0;
  std::string s;
};

inline std::uint64_t varint(const std::string& b, std::size_t* i) {
  std::uint64_t v = 0;
  for (int shift = 0; *i < b.size(); shift += 7) {
    auto c = static_cast<unsigned char>(b[(*i)++]);
    v |= static_cast<std::uint64_t>(c & 0x7f) << shift;
    if ((c & 0x80) == 0) return v;
  }
  throw std::runtime_error("truncated varint");
}

inline std::vector<Field> fields(const std::string& b) {
  std::vector<Field> out;
  for (std::size_t i = 0; i < b.size();) {
    std::uint64_t key = varint(b, &i);
    Field f;
    f.num = static_cast<int>(key >> 3);
    if ((key & 7) == 0) {
      f.v = varint(b, &i);
    } else if ((key & 7) == 2) {
      std::uint64_t n = varint(b, &i);
      if (i + n > b.size()) throw std::runtime_error("truncated field");
      f.s = b.substr(i, n);
      f.bytes = true;
      i += n;
    } else {
      throw std::runtime_error("unexpected wire type");
    }
    out.push_back(std::move(f));
  }
  return out;
}

// packedOrOne: a repeated varint field, packed or not.
inline void packedOrOne(const Field& f, std::vector<std::uint64_t>* out) {
  if (!f.bytes) {
    out->push_back(f.v);
    return;
  }
  for (std::size_t i = 0; i < f.s.size();) out->push_back(varint(f.s, &i));
}

}  // namespace profile_reader

// ParseProfile decodes data (gzipped or not); throws std::runtime_error.
inline Profile ParseProfile(const std::string& data) {
  using namespace profile_reader;
  std::string raw = gunzip(data);
  std::vector<std::string> strings;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> types;  // str ids
  std::pair<std::uint64_t, std::uint64_t> ptype{0, 0};
  std::map<std::uint64_t, std::uint64_t> funcName;  // id -> str id
  std::map<std::uint64_t, std::vector<std::uint64_t>> locFuncs;
  std::map<std::uint64_t, std::uint64_t> locMapping;  // id -> mapping id
  std::map<std::uint64_t, bool> mappingHasFunctions;  // id -> has_functions
  struct RawSample {
    std::vector<std::uint64_t> locs, values;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> labels;
  };
  std::vector<RawSample> raws;
  Profile p;
  auto valueType = [](const std::string& s) {
    std::pair<std::uint64_t, std::uint64_t> t{0, 0};
    for (const Field& f : fields(s)) (f.num == 1 ? t.first : t.second) = f.v;
    return t;
  };
  for (const Field& f : fields(raw)) {
    switch (f.num) {
      case 1:
        types.push_back(valueType(f.s));
        break;
      case 2: {
        RawSample r;
        for (const Field& g : fields(f.s)) {
          if (g.num == 1) packedOrOne(g, &r.locs);
          if (g.num == 2) packedOrOne(g, &r.values);
          if (g.num == 3) {
            std::pair<std::uint64_t, std::uint64_t> kv{0, 0};
            for (const Field& h : fields(g.s)) {
              if (h.num == 1) kv.first = h.v;
              if (h.num == 2) kv.second = h.v;
            }
            r.labels.push_back(kv);
          }
        }
        raws.push_back(std::move(r));
        break;
      }
      case 3: {
        std::uint64_t id = 0;
        bool hasFunctions = false;
        for (const Field& g : fields(f.s)) {
          if (g.num == 1) id = g.v;
          if (g.num == 7) hasFunctions = g.v != 0;
        }
        mappingHasFunctions[id] = hasFunctions;
        break;
      }
      case 4: {
        std::uint64_t id = 0, mapping = 0;
        std::vector<std::uint64_t> fns;
        for (const Field& g : fields(f.s)) {
          if (g.num == 1) id = g.v;
          if (g.num == 2) mapping = g.v;
          if (g.num == 4) {
            for (const Field& h : fields(g.s)) {
              if (h.num == 1) fns.push_back(h.v);
            }
          }
        }
        locFuncs[id] = fns;
        locMapping[id] = mapping;
        break;
      }
      case 5: {
        std::uint64_t id = 0, name = 0;
        for (const Field& g : fields(f.s)) {
          if (g.num == 1) id = g.v;
          if (g.num == 2) name = g.v;
        }
        funcName[id] = name;
        break;
      }
      case 6:
        strings.push_back(f.s);
        break;
      case 11:
        ptype = valueType(f.s);
        break;
      case 12:
        p.period = static_cast<std::int64_t>(f.v);
        break;
      default:
        break;
    }
  }
  auto str = [&](std::uint64_t i) {
    if (i >= strings.size()) throw std::runtime_error("bad string index");
    return strings[i];
  };
  for (const auto& [loc, mapping] : locMapping) {
    auto m = mappingHasFunctions.find(mapping);
    if (m == mappingHasFunctions.end() || !m->second) p.locationsLeftToPprof++;
  }
  for (const auto& [t, u] : types) p.sampleTypes.emplace_back(str(t), str(u));
  p.periodType = {str(ptype.first), str(ptype.second)};
  for (const RawSample& r : raws) {
    ProfSample s;
    for (std::uint64_t v : r.values) {
      s.values.push_back(static_cast<std::int64_t>(v));
    }
    for (std::uint64_t loc : r.locs) {
      for (std::uint64_t fn : locFuncs.at(loc)) {
        s.functions.push_back(str(funcName.at(fn)));
      }
    }
    for (const auto& [k, v] : r.labels) s.labels[str(k)] = str(v);
    p.samples.push_back(std::move(s));
  }
  return p;
}

}  // namespace gort_test

#endif  // GORT_TESTS_PROFILE_READER_H_
