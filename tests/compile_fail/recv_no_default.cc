// expect: T has no default constructor: use RecvOk\(\)
#include "gort/gort.h"
struct NoDefault {
  explicit NoDefault(int v) : v(v) {}
  int v;
};
int F(gort::Chan<NoDefault> c) { return c.Recv().v; }
