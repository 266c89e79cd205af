// expect: channel element type must be movable
#include "gort/gort.h"
struct Pinned {
  Pinned() = default;
  Pinned(Pinned&&) = delete;
};
void F() { auto c = gort::MakeChan<Pinned>(); }
