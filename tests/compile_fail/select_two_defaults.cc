// expect: Select: more than one default case
#include "gort/gort.h"
int F(gort::Chan<int> c) {
  return gort::Select(gort::RecvCase(c), gort::DefaultCase(),
                      gort::DefaultCase());
}
