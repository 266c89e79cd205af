// gort/time.h: timers and tickers (Go's package time: After, Timer,
// AfterFunc, Ticker). All run on the runtime's per-P timer heaps: no thread
// per timer. A timer channel carries the Nanotime() reading taken when the
// timer fired (where Go sends a time.Time): nanoseconds on gort's monotonic
// clock, comparable with Nanotime() and with each other.
#ifndef GORT_TIME_H_
#define GORT_TIME_H_

#include <chrono>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "gort/chan.h"

namespace gort {

namespace internal {
// A timer of the runtime with its channel or function (pkg/time/sleep.cc).
struct timerObj;
// An AfterFunc body, type-erased: call(f) runs it, destroy(f) frees it.
struct TimerFunc {
  void (*call)(void* f) = nullptr;
  void (*destroy)(void* f) = nullptr;
  void* f = nullptr;
};
// Counts one more handle of t.
void timerRef(timerObj* t);
// Drops one handle of t; the last reference frees it.
void timerUnref(timerObj* t);
// Starts a timer that sends on c (a capacity-1 channel), or else starts a
// goroutine running fn, after d ns and then every period ns if period > 0;
// returns it with one reference for the caller.
timerObj* startTimer(hchan* c, std::int64_t d, std::int64_t period,
                     TimerFunc fn);
// Stops t; true if it was pending (Go's stopTimer (time.go:222)).
bool stopTimer(timerObj* t);
// Re-arms t to fire after d ns (then every period ns if period > 0); true
// if it was pending (Go's resetTimer (time.go:231) / modTimer).
bool resetTimer(timerObj* t, std::int64_t d, std::int64_t period);

// A counted handle to a runtime timer, shared by Timer and Ticker.
class TimerHandle {
 public:
  // An empty handle.
  TimerHandle() = default;
  // Another handle to the same timer.
  TimerHandle(const TimerHandle& o) : c_(o.c_), t_(o.t_) {
    if (t_ != nullptr) timerRef(t_);
  }
  // Takes o's timer; o becomes empty.
  TimerHandle(TimerHandle&& o) noexcept
      : c_(std::move(o.c_)), t_(std::exchange(o.t_, nullptr)) {}
  // Names o's timer (copied or moved).
  TimerHandle& operator=(TimerHandle o) noexcept {
    c_.swap(o.c_);
    std::swap(t_, o.t_);
    return *this;
  }
  // Drops this handle; the timer itself keeps going.
  ~TimerHandle() {
    if (t_ != nullptr) timerUnref(t_);
  }

 protected:
  // A handle to t, whose reference it takes over, with channel c.
  TimerHandle(Chan<std::int64_t> c, timerObj* t) : c_(std::move(c)), t_(t) {}
  Chan<std::int64_t> c_;  // nil for AfterFunc
  timerObj* t_ = nullptr;
};
}  // namespace internal

// A channel of capacity 1 that receives Nanotime() once d has passed, even
// if nobody is receiving yet (time.After).
Chan<std::int64_t> After(std::chrono::nanoseconds d);

// A single event (time.Timer): after its duration the current Nanotime() is
// sent on C(), or for AfterFunc its function runs in a new goroutine.
// Handles are cheap to copy and share the timer; dropping every handle does
// not stop it. A default-constructed Timer is empty: Stop and Reset panic.
class Timer : public internal::TimerHandle {
 public:
  // An empty Timer.
  Timer() = default;
  // The channel the time is sent on (capacity 1); nil for AfterFunc timers.
  const Chan<std::int64_t>& C() const { return c_; }
  // Prevents the timer from firing; true if that stopped it, false if it
  // had already fired or been stopped. Does not drain or close C().
  bool Stop();
  // Makes the timer fire after d from now; true if it was still pending.
  // For a channel timer, stop it and drain C() first (as in Go 1.19).
  bool Reset(std::chrono::nanoseconds d);

 private:
  friend Timer NewTimer(std::chrono::nanoseconds d);
  friend Timer MakeAfterFuncTimer(std::chrono::nanoseconds d,
                                  internal::TimerFunc fn);
  Timer(Chan<std::int64_t> c, internal::timerObj* t)
      : TimerHandle(std::move(c), t) {}
};

// A Timer that sends the time on its channel after d (time.NewTimer).
Timer NewTimer(std::chrono::nanoseconds d);

// AfterFunc's type-erased half: a Timer that runs fn in a goroutine.
Timer MakeAfterFuncTimer(std::chrono::nanoseconds d, internal::TimerFunc fn);

// Runs f in its own goroutine after d (time.AfterFunc); the Timer may stop
// it or make it run again (Reset). f is kept until the last handle and the
// timer itself let go of it.
template <class F>
Timer AfterFunc(std::chrono::nanoseconds d, F&& f) {
  using Fn = std::decay_t<F>;
  internal::TimerFunc fn;
  fn.call = [](void* p) { (*static_cast<Fn*>(p))(); };
  fn.destroy = [](void* p) { delete static_cast<Fn*>(p); };
  fn.f = new Fn(std::forward<F>(f));
  return MakeAfterFuncTimer(d, fn);
}

// Sends the time on C() every period (time.Ticker); a receiver too slow
// for it misses ticks rather than queueing them (C() holds one). Ticks go on
// until Stop, as in Go 1.19, whether or not a handle remains.
class Ticker : public internal::TimerHandle {
 public:
  // An empty Ticker: Stop does nothing, Reset panics.
  Ticker() = default;
  // The channel the ticks are sent on (capacity 1).
  const Chan<std::int64_t>& C() const { return c_; }
  // Turns the ticker off; no tick is sent after Stop returns unless one was
  // already being sent. Does not close C().
  void Stop();
  // Stops the ticker and restarts it with period d (> 0, or it panics).
  void Reset(std::chrono::nanoseconds d);

 private:
  friend Ticker NewTicker(std::chrono::nanoseconds d);
  Ticker(Chan<std::int64_t> c, internal::timerObj* t)
      : TimerHandle(std::move(c), t) {}
};

// A Ticker with period d; d <= 0 panics with "non-positive interval for
// NewTicker" (time.NewTicker).
Ticker NewTicker(std::chrono::nanoseconds d);

}  // namespace gort

#endif  // GORT_TIME_H_
