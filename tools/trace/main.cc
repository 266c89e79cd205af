// tools/trace/main.cc: gort-trace, the command that reads an execution
// trace written by GORT_TRACE or gort::StartTrace (Go's `go tool trace`).
//
//   gort-trace summary TRACE.json           text summary on stdout
//   gort-trace html TRACE.json [-o OUT.html] self-contained HTML timeline
#include <cstdio>
#include <fstream>
#include <string>

#include "trace_file.h"

namespace {

int Usage() {
  std::fprintf(
      stderr,
      "usage: gort-trace summary TRACE.json\n"
      "       gort-trace html TRACE.json [-o OUT.html]\n"
      "TRACE.json is written by GORT_TRACE=path GORT_TRACE_FORMAT=json\n"
      "or gort::StartTrace(path, gort::TraceFormat::kChromeJSON);\n"
      "html writes one page with every script and style inline\n"
      "(default OUT: TRACE.html beside the trace).\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Usage();
  std::string cmd = argv[1];
  std::string in = argv[2];
  gort::trace::Trace t;
  std::string err;
  if (cmd != "summary" && cmd != "html") return Usage();
  if (!gort::trace::LoadTrace(in, &t, &err)) {
    std::fprintf(stderr, "gort-trace: %s: %s\n", in.c_str(), err.c_str());
    return 1;
  }
  if (cmd == "summary") {
    if (argc != 3) return Usage();
    std::fputs(gort::trace::FormatSummary(gort::trace::Summarize(t)).c_str(),
               stdout);
    return 0;
  }
  std::string out = in;
  if (out.size() > 5 && out.substr(out.size() - 5) == ".json") {
    out.resize(out.size() - 5);
  }
  out += ".html";
  if (argc == 5 && std::string(argv[3]) == "-o") {
    out = argv[4];
  } else if (argc != 3) {
    return Usage();
  }
  std::string base = in.substr(in.find_last_of('/') + 1);
  std::ofstream f(out, std::ios::binary);
  f << gort::trace::RenderHtml(t, base);
  f.close();
  if (!f) {
    std::fprintf(stderr, "gort-trace: cannot write %s\n", out.c_str());
    return 1;
  }
  std::fprintf(stderr, "gort-trace: wrote %s\n", out.c_str());
  return 0;
}
