// tests/tsa/lockable_ok.cc: user code that locks gort's Mutex and RWMutex
// correctly. ctest compiles it with clang's -Wthread-safety -Werror
// (sync_tsa.ok): gort's annotations must not reject correct code, and the
// standard lock wrappers must accept gort's locks (BasicLockable, Lockable,
// SharedLockable).
#include <mutex>
#include <shared_mutex>

#include "gort/sync.h"

#define GUARDED_BY(x) __attribute__((guarded_by(x)))

namespace {

struct Account {
  gort::Mutex mu;
  int balance GUARDED_BY(mu) = 0;

  void Deposit(int n) {
    mu.Lock();
    balance += n;
    mu.Unlock();
  }
  bool TryDeposit(int n) {
    if (!mu.TryLock()) return false;
    balance += n;
    mu.Unlock();
    return true;
  }
  int Read() {
    mu.lock();
    int b = balance;
    mu.unlock();
    return b;
  }
};

struct Table {
  gort::RWMutex mu;
  int size GUARDED_BY(mu) = 0;

  int Size() {
    mu.RLock();
    int n = size;
    mu.RUnlock();
    return n;
  }
  void Grow() {
    mu.Lock();
    size++;
    mu.Unlock();
  }
  bool TryGrow() {
    if (!mu.TryLock()) return false;
    size++;
    mu.Unlock();
    return true;
  }
};

// The standard wrappers instantiate with gort's locks.
void Wrappers(gort::Mutex& m, gort::RWMutex& rw) {
  { std::lock_guard<gort::Mutex> g(m); }
  { std::unique_lock<gort::Mutex> u(m, std::try_to_lock); }
  { std::shared_lock<gort::RWMutex> s(rw); }
  { std::unique_lock<gort::RWMutex> u(rw); }
}

}  // namespace

void UseAll() {
  Account a;
  a.Deposit(1);
  (void)a.TryDeposit(1);
  (void)a.Read();
  Table t;
  t.Grow();
  (void)t.TryGrow();
  (void)t.Size();
  Wrappers(a.mu, t.mu);
}
