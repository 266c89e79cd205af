// gort/defer.h: the defer statement of Go as a scope guard.
#ifndef GORT_DEFER_H_
#define GORT_DEFER_H_

#include <exception>
#include <type_traits>
#include <utility>

namespace gort {

namespace internal {
// True while Run's end unwinds an abandoned goroutine (Go's exit runs no
// deferred call; destructors still run in C++).
bool ExitUnwinding();
}  // namespace internal

// Runs fn when the scope ends, normally or by an exception, as Go's `defer
// fn()` runs at function return or panic; not when Run's end unwinds a
// goroutine that main left behind (Go's exit runs no defers), nor for an
// exception nothing catches, which ends the program at the throw (unlike
// Go, which runs deferred calls before printing the panic).
template <class F>
class [[nodiscard]] Defer {
 public:
  // Defers fn.
  explicit Defer(F fn) : fn_(std::move(fn)) {}
  Defer(const Defer&) = delete;
  Defer& operator=(const Defer&) = delete;
  // Runs fn unless Cancel was called or Run's end is unwinding.
  ~Defer() noexcept(false) {
    if (!armed_) return;
    if (std::uncaught_exceptions() > uncaught_ && internal::ExitUnwinding()) {
      return;
    }
    fn_();
  }
  // Drops the deferred call.
  void Cancel() { armed_ = false; }

 private:
  F fn_;
  int uncaught_ = std::uncaught_exceptions();
  bool armed_ = true;
};

}  // namespace gort

#endif  // GORT_DEFER_H_
