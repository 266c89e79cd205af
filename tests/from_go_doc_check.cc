// tests/from_go_doc_check.cc: fails unless every C++ example quoted in
// docs/from-go.md (a ```cpp block after "<!-- snippet: NAME -->") is,
// line for line, the snippet NAME of tests/from_go_snippets.cc (between
// "// snippet: NAME" and "// end snippet", common indentation removed), and
// every snippet there is quoted. So the document shows only code that the
// test build compiles.
//
// Usage: from_go_doc_check DOC SNIPPETS
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<std::string> ReadLines(const char* path, bool* ok) {
  std::ifstream in(path);
  *ok = static_cast<bool>(in);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string Dedent(const std::vector<std::string>& lines) {
  std::size_t indent = std::string::npos;
  for (const std::string& l : lines) {
    std::size_t i = l.find_first_not_of(' ');
    if (i != std::string::npos && i < indent) indent = i;
  }
  std::string out;
  for (const std::string& l : lines) {
    out += l.size() > indent ? l.substr(indent) : "";
    out += "\n";
  }
  return out;
}

std::string Trim(const std::string& s) {
  std::size_t a = s.find_first_not_of(' ');
  std::size_t b = s.find_last_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: from_go_doc_check DOC SNIPPETS\n");
    return 2;
  }
  bool ok_doc = false, ok_src = false;
  std::vector<std::string> doc = ReadLines(argv[1], &ok_doc);
  std::vector<std::string> src = ReadLines(argv[2], &ok_src);
  if (!ok_doc || !ok_src) {
    std::fprintf(stderr, "from_go_doc_check: cannot read %s or %s\n", argv[1],
                 argv[2]);
    return 2;
  }
  std::map<std::string, std::string> snippets;
  for (std::size_t i = 0; i < src.size(); i++) {
    std::string t = Trim(src[i]);
    if (t.rfind("// snippet: ", 0) != 0) continue;
    std::string name = t.substr(12);
    std::vector<std::string> body;
    for (i++; i < src.size() && Trim(src[i]) != "// end snippet"; i++) {
      body.push_back(src[i]);
    }
    snippets[name] = Dedent(body);
  }
  int failures = 0;
  std::map<std::string, bool> quoted;
  for (std::size_t i = 0; i < doc.size(); i++) {
    std::string t = Trim(doc[i]);
    if (t.rfind("<!-- snippet: ", 0) != 0) continue;
    std::string name = t.substr(14, t.size() - 14 - 4);
    if (i + 1 >= doc.size() || Trim(doc[i + 1]) != "```cpp") {
      std::cerr << "doc snippet " << name << ": no ```cpp block follows\n";
      failures++;
      continue;
    }
    std::vector<std::string> body;
    for (i += 2; i < doc.size() && Trim(doc[i]) != "```"; i++) {
      body.push_back(doc[i]);
    }
    quoted[name] = true;
    auto it = snippets.find(name);
    if (it == snippets.end()) {
      std::cerr << "doc snippet " << name << ": not in " << argv[2] << "\n";
      failures++;
    } else if (it->second != Dedent(body)) {
      std::cerr << "doc snippet " << name << " differs from the compiled one."
                << "\n--- doc:\n"
                << Dedent(body) << "--- compiled:\n"
                << it->second;
      failures++;
    }
  }
  for (const auto& [name, text] : snippets) {
    if (!quoted[name]) {
      std::cerr << "snippet " << name << " is not quoted in " << argv[1]
                << "\n";
      failures++;
    }
  }
  std::printf("from_go_doc_check: %zu snippets, %d problems\n", snippets.size(),
              failures);
  return failures == 0 ? 0 : 1;
}
