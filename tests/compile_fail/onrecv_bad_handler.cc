// expect: OnRecv: the handler takes \(T, bool\), \(T\) or \(\)
#include "gort/gort.h"
int F(gort::Chan<int> c) {
  return gort::Select(gort::OnRecv(c, [](const char*) {}));
}
