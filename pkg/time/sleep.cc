// pkg/time/sleep.cc: Timer, AfterFunc, After and Ticker (Go's time/sleep.go
// and time/tick.go) on the runtime timers of time.cc.
//
// A timerObj is Go's runtimeTimer (time/sleep.go:13) with what Go's garbage
// collector does for it made explicit: a reference count. Every Timer or Ticker
// handle holds a reference, the heap holds one while the timer is pending, a
// call of its function holds one while it runs, and an AfterFunc goroutine
// holds one until it returns. So a dropped handle never stops a timer (as in
// Go), and a stopped timer's memory outlives any call still under way.
#include <atomic>
#include <string>
#include <utility>

#include "gort/internal/chan_impl.h"
#include "gort/runtime.h"
#include "gort/time.h"
#include "proc.h"

namespace gort::internal {

struct timerObj {
  runtime::timer t;
  std::atomic<std::int32_t> refs{1};
  hchan* c = nullptr;  // sendTime's channel (a counted handle), or nullptr
  TimerFunc fn;        // goFunc's function
};

}  // namespace gort::internal

namespace gort {

using internal::timerObj;

namespace {

timerObj* objOf(runtime::timer* t) { return static_cast<timerObj*>(t->arg); }

void refTimer(runtime::timer* t) { internal::timerRef(objOf(t)); }
void unrefTimer(runtime::timer* t) { internal::timerUnref(objOf(t)); }

// sendTime mirrors Go's sendTime (time/sleep.go:143): a non-blocking send of
// the current time, so a tick nobody has taken yet makes the next one drop.
void sendTime(void* arg, std::uintptr_t) {
  auto* o = static_cast<timerObj*>(arg);
  std::int64_t now = os::nanotime();
  internal::scase sc{o->c, &now, true};
  std::uint16_t order[2];
  bool ok;
  internal::selectgo(&sc, 1, order, false, &ok);
}

// A reference to a timerObj owned by an AfterFunc goroutine, dropped when
// the goroutine ends or, if Run ends before it starts, is freed.
struct FuncRef {
  explicit FuncRef(timerObj* o) : o(o) { internal::timerRef(o); }
  FuncRef(FuncRef&& other) noexcept : o(std::exchange(other.o, nullptr)) {}
  FuncRef(const FuncRef&) = delete;
  FuncRef& operator=(const FuncRef&) = delete;
  ~FuncRef() {
    if (o != nullptr) internal::timerUnref(o);
  }
  timerObj* o;
};

// goFunc mirrors Go's goFunc (time/sleep.go:175): start the function in a new
// goroutine. It runs on g0 with a P, so it queues the goroutine itself (Go's
// newproc (proc.go:4094)).
void goFunc(void* arg, std::uintptr_t) {
  auto* o = static_cast<timerObj*>(arg);
  runtime::G* newg = runtime::newproc1(
      internal::Func([r = FuncRef(o)]() mutable { r.o->fn.call(r.o->fn.f); }),
      nullptr);
  runtime::runqput(runtime::getg()->m->p, newg, true);
  runtime::wakep();
}

void needGoroutine(const char* what) {
  if (runtime::getcurg() == nullptr) {
    throw Panic(std::string("gort: ") + what + " called outside a goroutine");
  }
}

}  // namespace

void internal::timerRef(timerObj* t) {
  t->refs.fetch_add(1, std::memory_order_relaxed);
}

void internal::timerUnref(timerObj* t) {
  if (t->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (t->c != nullptr) chanunref(t->c);
  if (t->fn.destroy != nullptr) t->fn.destroy(t->fn.f);
  delete t;
}

// startTimer mirrors Go's startTimer (time/sleep.go:41) (from NewTimer,
// AfterFunc, NewTicker).
timerObj* internal::startTimer(hchan* c, std::int64_t d, std::int64_t period,
                               TimerFunc fn) {
  auto* o = new timerObj;
  o->refs.store(2, std::memory_order_relaxed);  // the caller's and the heap's
  if (c != nullptr) chanref(c);
  o->c = c;
  o->fn = fn;
  runtime::timer* t = &o->t;
  t->when = runtime::whenAfter(d);
  t->period = period;
  t->f = c != nullptr ? sendTime : goFunc;
  t->arg = o;
  t->ref = refTimer;
  t->unref = unrefTimer;
  runtime::addtimer(t);
  return o;
}

bool internal::stopTimer(timerObj* t) { return runtime::deltimer(&t->t); }

bool internal::resetTimer(timerObj* t, std::int64_t d, std::int64_t period) {
  return runtime::modtimer(&t->t, runtime::whenAfter(d), period);
}

Timer NewTimer(std::chrono::nanoseconds d) {
  needGoroutine("NewTimer");
  Chan<std::int64_t> c = MakeChan<std::int64_t>(1);
  timerObj* t =
      internal::startTimer(internal::ChanAccess::raw(c), d.count(), 0, {});
  return Timer(std::move(c), t);
}

Timer MakeAfterFuncTimer(std::chrono::nanoseconds d, internal::TimerFunc fn) {
  if (runtime::getcurg() == nullptr) {
    fn.destroy(fn.f);
    needGoroutine("AfterFunc");
  }
  return Timer(Chan<std::int64_t>(),
               internal::startTimer(nullptr, d.count(), 0, fn));
}

Chan<std::int64_t> After(std::chrono::nanoseconds d) {
  needGoroutine("After");
  return NewTimer(d).C();
}

bool Timer::Stop() {
  if (t_ == nullptr) throw Panic("time: Stop called on uninitialized Timer");
  return internal::stopTimer(t_);
}

bool Timer::Reset(std::chrono::nanoseconds d) {
  if (t_ == nullptr) throw Panic("time: Reset called on uninitialized Timer");
  needGoroutine("Timer::Reset");
  return internal::resetTimer(t_, d.count(), 0);
}

Ticker NewTicker(std::chrono::nanoseconds d) {
  if (d.count() <= 0) throw Panic("non-positive interval for NewTicker");
  needGoroutine("NewTicker");
  Chan<std::int64_t> c = MakeChan<std::int64_t>(1);
  timerObj* t = internal::startTimer(internal::ChanAccess::raw(c), d.count(),
                                     d.count(), {});
  return Ticker(std::move(c), t);
}

void Ticker::Stop() {
  if (t_ != nullptr) internal::stopTimer(t_);
}

void Ticker::Reset(std::chrono::nanoseconds d) {
  if (d.count() <= 0) throw Panic("non-positive interval for Ticker.Reset");
  if (t_ == nullptr) throw Panic("time: Reset called on uninitialized Ticker");
  needGoroutine("Ticker::Reset");
  internal::resetTimer(t_, d.count(), d.count());
}

}  // namespace gort
