// pkg/context/context.cc: package context's cancelation (Go's
// context/context.go: cancelCtx, timerCtx, propagateCancel), without values.
//
// Every cancelable Context is one ContextState: its Done channel (made at
// once, where Go makes it lazily), its error, its deadline, its children and
// its deadline timer, under a gort::Mutex, so goroutines that contend for
// it park. Go's garbage collector becomes reference counting: a parent holds
// its children until they are canceled (as Go's children map does), a child
// refers to its parent weakly, and the deadline timer's function refers to
// its Context weakly, so no cycle outlives the handles. Every parent is a
// gort Context, so Go's goroutine watching a foreign parent is not needed.
#include "gort/context.h"

#include <atomic>
#include <unordered_map>

#include "gort/runtime.h"
#include "gort/select.h"
#include "gort/sync.h"
#include "gort/time.h"

namespace gort {

namespace internal {

struct ContextState {
  // Makes a fresh state under parent, which it shares the deadline of.
  static std::shared_ptr<ContextState> Make(
      std::optional<std::chrono::steady_clock::time_point> deadline) {
    auto s = std::make_shared<ContextState>();
    s->done = MakeChan<std::monostate>(0);
    s->deadline = deadline;
    return s;
  }
  static Context Handle(std::shared_ptr<ContextState> s) {
    return Context(std::move(s));
  }
  static const std::shared_ptr<ContextState>& Of(const Context& c) {
    return c.s_;
  }

  ~ContextState() {
    if (has_timer) timer.Stop();  // nothing left for it to cancel
  }

  Chan<std::monostate> done;
  std::atomic<ContextError> err{ContextError::kNone};
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::weak_ptr<ContextState> parent;
  Mutex mu;
  // Guarded by mu:
  std::unordered_map<ContextState*, std::shared_ptr<ContextState>> children;
  Timer timer;
  bool has_timer = false;
};

}  // namespace internal

using internal::ContextState;

namespace {

// cancel mirrors Go's cancelCtx.cancel (context/context.go:397): close done,
// cancel the children, stop the timer and, if asked, leave the parent's
// children.
void cancel(ContextState* s, bool removeFromParent, ContextError err) {
  s->mu.Lock();
  if (s->err.load(std::memory_order_relaxed) != ContextError::kNone) {
    s->mu.Unlock();
    return;  // already canceled
  }
  s->err.store(err, std::memory_order_release);
  s->done.Close();
  auto children = std::move(s->children);
  s->children.clear();
  bool had_timer = std::exchange(s->has_timer, false);
  Timer timer = std::move(s->timer);
  s->mu.Unlock();
  if (had_timer) timer.Stop();
  for (auto& entry : children) cancel(entry.second.get(), false, err);
  if (!removeFromParent) return;
  if (std::shared_ptr<ContextState> p = s->parent.lock()) {
    p->mu.Lock();
    p->children.erase(s);
    p->mu.Unlock();
  }
}

// propagateCancel mirrors Go's propagateCancel (context/context.go:250): child
// is canceled when parent is, at once if parent already is.
void propagateCancel(const std::shared_ptr<ContextState>& parent,
                     const std::shared_ptr<ContextState>& child) {
  if (parent == nullptr) return;  // Background is never canceled
  parent->mu.Lock();
  ContextError err = parent->err.load(std::memory_order_relaxed);
  if (err == ContextError::kNone) {
    child->parent = parent;
    parent->children.emplace(child.get(), child);
  }
  parent->mu.Unlock();
  if (err != ContextError::kNone) cancel(child.get(), false, err);
}

CancelFunc cancelFuncOf(std::shared_ptr<ContextState> s) {
  return [s = std::move(s)] { cancel(s.get(), true, ContextError::kCanceled); };
}

}  // namespace

const char* ContextErrorString(ContextError e) {
  switch (e) {
    case ContextError::kNone:
      return "";
    case ContextError::kCanceled:
      return "context canceled";
    case ContextError::kDeadlineExceeded:
      return "context deadline exceeded";
  }
  return "";
}

Chan<std::monostate> Context::Done() const {
  return s_ != nullptr ? s_->done : Chan<std::monostate>();
}

ContextError Context::Err() const {
  return s_ != nullptr ? s_->err.load(std::memory_order_acquire)
                       : ContextError::kNone;
}

std::optional<std::chrono::steady_clock::time_point> Context::Deadline() const {
  return s_ != nullptr ? s_->deadline : std::nullopt;
}

Context Background() { return Context(); }

std::pair<Context, CancelFunc> WithCancel(const Context& parent) {
  auto s = ContextState::Make(parent.Deadline());
  propagateCancel(ContextState::Of(parent), s);
  return {ContextState::Handle(s), cancelFuncOf(s)};
}

std::pair<Context, CancelFunc> WithDeadline(
    const Context& parent, std::chrono::steady_clock::time_point t) {
  std::optional<std::chrono::steady_clock::time_point> cur = parent.Deadline();
  if (cur.has_value() && *cur <= t) {
    return WithCancel(parent);  // the parent's deadline comes first anyway
  }
  auto s = ContextState::Make(t);
  propagateCancel(ContextState::Of(parent), s);
  auto dur = t - std::chrono::steady_clock::now();
  if (dur <= std::chrono::steady_clock::duration::zero()) {
    cancel(s.get(), true, ContextError::kDeadlineExceeded);
    return {ContextState::Handle(s), cancelFuncOf(s)};
  }
  s->mu.Lock();
  if (s->err.load(std::memory_order_relaxed) == ContextError::kNone) {
    std::weak_ptr<ContextState> w = s;
    s->timer = AfterFunc(
        std::chrono::duration_cast<std::chrono::nanoseconds>(dur), [w] {
          if (std::shared_ptr<ContextState> c = w.lock()) {
            cancel(c.get(), true, ContextError::kDeadlineExceeded);
          }
        });
    s->has_timer = true;
  }
  s->mu.Unlock();
  return {ContextState::Handle(s), cancelFuncOf(s)};
}

// AfterFunc mirrors Go 1.21's context.AfterFunc. Go registers f among the
// context's children; gort parks a goroutine on Done and on a stop channel
// instead (the idiom Go programs used before 1.21), so f runs on that
// goroutine.
std::function<bool()> AfterFunc(const Context& ctx, std::function<void()> f) {
  enum : int { kPending, kRan, kStopped };
  auto state = std::make_shared<std::atomic<int>>(kPending);
  Chan<std::monostate> done = ctx.Done();
  if (!done) return [] { return false; };  // Background: never done
  auto stop = MakeChan<std::monostate>();
  Go([state, done, stop, f = std::move(f)] {
    if (Select(RecvCase(done), RecvCase(stop)) != 0) return;
    int want = kPending;
    if (state->compare_exchange_strong(want, kRan)) f();
  });
  return [state, stop] {
    int want = kPending;
    if (!state->compare_exchange_strong(want, kStopped)) return false;
    stop.Close();
    return true;
  };
}

std::pair<Context, CancelFunc> WithTimeout(const Context& parent,
                                           std::chrono::nanoseconds d) {
  return WithDeadline(parent, std::chrono::steady_clock::now() + d);
}

}  // namespace gort
