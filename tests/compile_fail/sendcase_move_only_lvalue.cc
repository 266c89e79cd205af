// expect: SendCase: a move-only value is sent as SendCase\(ch, std::move\(v\)\)
#include <memory>

#include "gort/gort.h"
int F(gort::Chan<std::unique_ptr<int>> c, std::unique_ptr<int>& v) {
  return gort::Select(gort::SendCase(c, v), gort::DefaultCase());
}
