// expect: (compiles)
// The control: each case above is this program with one mistake, so the
// harness must see this one compile, or its failures prove nothing.
#include <memory>
#include <variant>

#include "gort/gort.h"
struct NoDefault {
  explicit NoDefault(int v) : v(v) {}
  int v;
};
int F(gort::Chan<int> c, gort::Chan<std::unique_ptr<int>> m,
      std::unique_ptr<int>& v, gort::Chan<NoDefault> n) {
  auto done = gort::MakeChan<std::monostate>();
  auto r = n.RecvOk();
  return gort::Select(gort::RecvCase(c), gort::SendCase(m, std::move(v)),
                      gort::OnRecv(c, [](int, bool) {}), gort::DefaultCase()) +
         static_cast<int>(done.Len()) + (r ? r->v : 0);
}
