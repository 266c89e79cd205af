// tools/trace/json.cc: a recursive-descent JSON parser (RFC 8259), without
// surrogate-pair decoding beyond what trace files need.
#include "json.h"

#include <cstdlib>

namespace gort::trace {

namespace {

const Json kNull;

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  bool Value(Json* out, int depth) {
    if (depth > 200) return Fail("nesting too deep");
    Space();
    if (pos_ >= s_.size()) return Fail("unexpected end");
    char c = s_[pos_];
    if (c == '{') return Object(out, depth);
    if (c == '[') return Array(out, depth);
    if (c == '"') {
      out->kind = Json::Kind::kString;
      return String(&out->str);
    }
    if (Literal("true")) return Set(out, Json::Kind::kBool, true);
    if (Literal("false")) return Set(out, Json::Kind::kBool, false);
    if (Literal("null")) return Set(out, Json::Kind::kNull, false);
    return Number(out);
  }

  bool End() {
    Space();
    return pos_ == s_.size() || Fail("trailing characters");
  }

  std::string error;

 private:
  bool Fail(const std::string& msg) {
    if (error.empty()) error = msg + " at byte " + std::to_string(pos_);
    return false;
  }
  void Space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' ||
                                s_[pos_] == '\r' || s_[pos_] == '\t')) {
      pos_++;
    }
  }
  bool Literal(std::string_view lit) {
    if (s_.substr(pos_, lit.size()) != lit) return false;
    pos_ += lit.size();
    return true;
  }
  static bool Set(Json* out, Json::Kind k, bool b) {
    out->kind = k;
    out->boolean = b;
    return true;
  }
  bool Number(Json* out) {
    std::size_t start = pos_;
    while (pos_ < s_.size() &&
           std::string_view("+-0123456789.eE").find(s_[pos_]) !=
               std::string_view::npos) {
      pos_++;
    }
    if (pos_ == start) return Fail("unexpected character");
    std::string tok(s_.substr(start, pos_ - start));
    char* end = nullptr;
    out->number = std::strtod(tok.c_str(), &end);
    if (end != tok.c_str() + tok.size()) return Fail("bad number");
    out->kind = Json::Kind::kNumber;
    return true;
  }
  static void PutUtf8(std::string* s, unsigned cp) {
    if (cp < 0x80) {
      *s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *s += static_cast<char>(0xC0 | (cp >> 6));
      *s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *s += static_cast<char>(0xE0 | (cp >> 12));
      *s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *s += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  bool String(std::string* out) {
    pos_++;  // the quote
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (pos_ >= s_.size()) break;
      char e = s_[pos_++];
      switch (e) {
        case 'n':
          *out += '\n';
          break;
        case 't':
          *out += '\t';
          break;
        case 'r':
          *out += '\r';
          break;
        case 'b':
          *out += '\b';
          break;
        case 'f':
          *out += '\f';
          break;
        case 'u': {
          if (pos_ + 4 > s_.size()) return Fail("bad \\u escape");
          std::string hex(s_.substr(pos_, 4));
          pos_ += 4;
          PutUtf8(out, static_cast<unsigned>(
                           std::strtoul(hex.c_str(), nullptr, 16)));
          break;
        }
        default:
          *out += e;
      }
    }
    return Fail("unterminated string");
  }
  bool Array(Json* out, int depth) {
    out->kind = Json::Kind::kArray;
    pos_++;
    Space();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      pos_++;
      return true;
    }
    for (;;) {
      out->array.emplace_back();
      if (!Value(&out->array.back(), depth + 1)) return false;
      Space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        pos_++;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        pos_++;
        return true;
      }
      return Fail("expected , or ]");
    }
  }
  bool Object(Json* out, int depth) {
    out->kind = Json::Kind::kObject;
    pos_++;
    Space();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      pos_++;
      return true;
    }
    for (;;) {
      Space();
      if (pos_ >= s_.size() || s_[pos_] != '"') return Fail("expected a key");
      std::string key;
      if (!String(&key)) return false;
      Space();
      if (pos_ >= s_.size() || s_[pos_] != ':') return Fail("expected :");
      pos_++;
      if (!Value(&out->object[key], depth + 1)) return false;
      Space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        pos_++;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        pos_++;
        return true;
      }
      return Fail("expected , or }");
    }
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

}  // namespace

const Json& Json::operator[](const std::string& key) const {
  auto it = object.find(key);
  return it == object.end() ? kNull : it->second;
}

double Json::NumOr(const std::string& key, double def) const {
  auto it = object.find(key);
  return it == object.end() || it->second.kind != Kind::kNumber
             ? def
             : it->second.number;
}

std::string Json::Str(const std::string& key) const {
  auto it = object.find(key);
  return it == object.end() ? "" : it->second.str;
}

bool ParseJson(std::string_view text, Json* out, std::string* error) {
  Parser p(text);
  *out = Json{};
  if (p.Value(out, 0) && p.End()) return true;
  *error = p.error;
  return false;
}

}  // namespace gort::trace
