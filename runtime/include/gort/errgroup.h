// gort/errgroup.h: errgroup of golang.org/x/sync, for goroutines. An error is
// an exception, as everywhere in gort: a function run by Go that throws records
// the group's first exception, and Wait rethrows it.
#ifndef GORT_ERRGROUP_H_
#define GORT_ERRGROUP_H_

#include <exception>
#include <memory>
#include <utility>
#include <variant>

#include "gort/chan.h"
#include "gort/context.h"
#include "gort/defer.h"
#include "gort/runtime.h"
#include "gort/select.h"
#include "gort/sync.h"

namespace gort {

// A group of goroutines working on one task (errgroup.Group); the zero
// value has no limit and no Context. Not copyable or movable.
class ErrGroup {
 public:
  // A group without a Context.
  ErrGroup() = default;
  ErrGroup(const ErrGroup&) = delete;
  ErrGroup& operator=(const ErrGroup&) = delete;

  // A group and a child of parent canceled when a function of the group
  // first throws or when Wait returns, whichever comes first
  // (errgroup.WithContext).
  static std::pair<std::unique_ptr<ErrGroup>, Context> WithContext(
      const Context& parent) {
    auto g = std::make_unique<ErrGroup>();
    auto [ctx, cancel] = WithCancel(parent);
    g->cancel_ = std::move(cancel);
    return {std::move(g), ctx};
  }

  // Runs fn in a new goroutine, after waiting for room under the limit; the
  // first exception fn throws is kept for Wait (Group.Go).
  template <class F>
  void Go(F&& fn) {
    if (sem_) sem_.Send(std::monostate{});
    Start(std::forward<F>(fn));
  }

  // Like Go, but only if the limit leaves room now; reports whether it
  // started fn (Group.TryGo).
  template <class F>
  bool TryGo(F&& fn) {
    if (sem_ && Select(SendCase(sem_, std::monostate{}), DefaultCase()) == 1) {
      return false;
    }
    Start(std::forward<F>(fn));
    return true;
  }

  // Limits the group to n active goroutines; n < 0 removes the limit.
  // Panics if goroutines of the group are active (Group.SetLimit).
  void SetLimit(int n) {
    if (sem_ && sem_.Len() != 0) {
      throw Panic(
          "errgroup: modify limit while goroutines in the group are "
          "still active");
    }
    sem_ = n < 0 ? Chan<std::monostate>()
                 : MakeChan<std::monostate>(static_cast<std::size_t>(n));
  }

  // Waits for every function started by Go, cancels the Context, and
  // rethrows the first exception one of them threw (Group.Wait).
  void Wait() {
    wg_.Wait();
    if (cancel_) cancel_();
    if (err_) std::rethrow_exception(err_);
  }

 private:
  template <class F>
  void Start(F&& fn) {
    wg_.Add(1);
    gort::Go([this, f = std::decay_t<F>(std::forward<F>(fn))]() mutable {
      Defer done([this] {
        if (sem_) sem_.Recv();
        wg_.Done();
      });
      std::exception_ptr e;
      try {
        f();
      } catch (...) {
        e = std::current_exception();
      }
      // Fail may park (as it could inside the catch block too: the
      // exception state moves with the goroutine).
      if (e) Fail(std::move(e));
    });
  }
  // Keeps e if it is the first and cancels the Context.
  void Fail(std::exception_ptr e) {
    mu_.Lock();
    bool first = !err_;
    if (first) err_ = std::move(e);
    mu_.Unlock();
    if (first && cancel_) cancel_();
  }

  WaitGroup wg_;
  Mutex mu_;
  std::exception_ptr err_;    // The first exception; guarded by mu_.
  CancelFunc cancel_;         // WithContext's cancel, or empty.
  Chan<std::monostate> sem_;  // One token per active goroutine; nil: no limit.
};

}  // namespace gort

#endif  // GORT_ERRGROUP_H_
