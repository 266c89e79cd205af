// tests/tsa/lockable_bad.cc: user code that touches data guarded by a
// gort::Mutex without holding it. ctest compiles it with clang's
// -Wthread-safety -Werror and expects the compile to fail (sync_tsa.bad):
// proof that gort::Mutex is a capability whose Lock, Unlock and TryLock the
// analysis understands. GORT_TSA_BAD selects the one mistake compiled.
#include "gort/sync.h"

#define GUARDED_BY(x) __attribute__((guarded_by(x)))

namespace {

struct Account {
  gort::Mutex mu;
  int balance GUARDED_BY(mu) = 0;
};

}  // namespace

void Mistake(Account& a) {
#if GORT_TSA_BAD == 1
  a.balance++;  // not locked at all
#elif GORT_TSA_BAD == 2
  a.mu.Lock();
  a.mu.Unlock();
  a.balance++;  // after Unlock
#elif GORT_TSA_BAD == 3
  (void)a.mu.TryLock();
  a.balance++;  // TryLock's result ignored: maybe not held
#elif GORT_TSA_BAD == 4
  a.mu.Lock();  // still held at the end of the function
#endif
}
