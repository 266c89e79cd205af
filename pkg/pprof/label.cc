// pkg/pprof/label.cc: profiler labels (Go's runtime/pprof label.go and
// runtime.go: Labels, Do, Label, SetGoroutineLabels). The set lives on the
// G as a counted runtime::labelMap (runtime/proflabel.h); Do replaces it for
// its scope and puts the old one back.
#include <algorithm>

#include "gort/pprof.h"
#include "panic.h"
#include "proc.h"
#include "proflabel.h"

namespace gort::pprof {

void LabelSet::Set(std::string key, std::string value) {
  auto it = std::lower_bound(
      list_.begin(), list_.end(), key,
      [](const auto& kv, const std::string& k) { return kv.first < k; });
  if (it != list_.end() && it->first == key) {
    it->second = std::move(value);
  } else {
    list_.emplace(it, std::move(key), std::move(value));
  }
}

namespace internal {

namespace {
// curg: the calling goroutine; Panic on a scheduler stack or outside Run.
runtime::G* curg(const char* what) {
  runtime::G* gp = runtime::getcurg();
  if (gp == nullptr) {
    throw Panic(std::string("gort: pprof.") + what +
                " called outside a goroutine");
  }
  return gp;
}
}  // namespace

// Go's Do (runtime/pprof/runtime.go:36): WithLabels merges the context's labels
// with the new ones (label.go), SetGoroutineLabels puts them on the G.
LabelScope::LabelScope(const LabelSet& labels) {
  runtime::G* gp = curg("Do");
  auto* old = gp->labels.load(std::memory_order_relaxed);
  LabelSet merged;
  if (old != nullptr) {
    for (const auto& [k, v] : old->list) merged.Set(k, v);
  }
  for (const auto& [k, v] : labels.list()) merged.Set(k, v);
  auto* fresh = new runtime::labelMap;
  fresh->list = merged.list();
  // The G's reference to old moves to this scope until it ends.
  gp->labels.store(fresh, std::memory_order_relaxed);
  saved_ = old;
}

LabelScope::~LabelScope() {
  runtime::G* gp = runtime::getcurg();  // the same goroutine
  // Swapped before released: a SIGPROF on this thread sees one or the
  // other, each still counted.
  runtime::labelRelease(gp->labels.exchange(
      static_cast<runtime::labelMap*>(saved_), std::memory_order_relaxed));
}

}  // namespace internal

std::optional<std::string> Label(std::string_view key) {
  runtime::G* gp = internal::curg("Label");
  const runtime::labelMap* l = gp->labels.load(std::memory_order_relaxed);
  if (l != nullptr) {
    for (const auto& [k, v] : l->list) {
      if (k == key) return v;
    }
  }
  return std::nullopt;
}

}  // namespace gort::pprof
