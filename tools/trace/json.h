// tools/trace/json.h: a small JSON reader, enough for Chrome trace event
// files (objects, arrays, strings with escapes, numbers, literals).
#ifndef GORT_TOOLS_TRACE_JSON_H_
#define GORT_TOOLS_TRACE_JSON_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gort::trace {

// Json: one parsed value.
struct Json {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string str;
  std::vector<Json> array;
  std::map<std::string, Json> object;

  // Returns the member named key, or a null value.
  const Json& operator[](const std::string& key) const;
  // Returns the number (0 if not a number).
  double Num() const { return kind == Kind::kNumber ? number : 0; }
  // Returns the member key as a number, or def if absent.
  double NumOr(const std::string& key, double def) const;
  // Returns the member key as a string, or "" if absent.
  std::string Str(const std::string& key) const;
  // Reports whether the object has member key.
  bool Has(const std::string& key) const { return object.count(key) != 0; }
};

// Parses text; on failure returns false and sets *error.
bool ParseJson(std::string_view text, Json* out, std::string* error);

}  // namespace gort::trace

#endif  // GORT_TOOLS_TRACE_JSON_H_
