// gort/context.h: cancellation and deadlines across goroutines (Go's package
// context, without values). A Context is closed (Done) when its CancelFunc
// is called, its deadline passes, or its parent is closed.
#ifndef GORT_CONTEXT_H_
#define GORT_CONTEXT_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <variant>

#include "gort/chan.h"

namespace gort {

// Why a Context is done (Go's Context.Err (context/context.go:106): nil,
// context.Canceled, context.DeadlineExceeded).
enum class ContextError { kNone, kCanceled, kDeadlineExceeded };

// Go's error text for e: "", "context canceled" or "context deadline
// exceeded".
const char* ContextErrorString(ContextError e);

namespace internal {
// The shared state of a cancelable Context (pkg/context/context.cc).
struct ContextState;
}  // namespace internal

// A cancellation signal with an optional deadline (context.Context). Cheap
// to copy; copies share state. A default-constructed Context is Background.
class Context {
 public:
  // Background: never canceled, no deadline.
  Context() = default;
  // Closed when the context is canceled or its deadline passes; a nil
  // channel (never ready) for Background. Use it in Select.
  Chan<std::monostate> Done() const;
  // kNone while Done is open, then why it closed.
  ContextError Err() const;
  // When the context will be canceled by itself, if ever.
  std::optional<std::chrono::steady_clock::time_point> Deadline() const;

 private:
  friend struct internal::ContextState;
  explicit Context(std::shared_ptr<internal::ContextState> s)
      : s_(std::move(s)) {}
  std::shared_ptr<internal::ContextState> s_;
};

// Cancels its Context and the Context's children; later calls do nothing
// (context.CancelFunc). Call it once the work is done, as Go requires.
using CancelFunc = std::function<void()>;

// The root of every Context tree: never canceled, no deadline
// (context.Background).
Context Background();

// A child of parent that is canceled by the CancelFunc or with parent
// (context.WithCancel).
std::pair<Context, CancelFunc> WithCancel(const Context& parent);

// A child of parent that is also canceled, with kDeadlineExceeded, once d
// has passed (context.WithTimeout).
std::pair<Context, CancelFunc> WithTimeout(const Context& parent,
                                           std::chrono::nanoseconds d);

// A child of parent that is also canceled, with kDeadlineExceeded, at t or
// at parent's deadline if that is sooner (context.WithDeadline).
std::pair<Context, CancelFunc> WithDeadline(
    const Context& parent, std::chrono::steady_clock::time_point t);

// Arranges for f to run in a goroutine of its own once ctx is done
// (context.AfterFunc, Go 1.21). The returned stop function keeps f from
// running if it has not started, and reports whether it did so; after ctx
// is done it returns false. Never runs f for Background.
std::function<bool()> AfterFunc(const Context& ctx, std::function<void()> f);

}  // namespace gort

#endif  // GORT_CONTEXT_H_
