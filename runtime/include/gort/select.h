// gort/select.h: Go's select statement over Chan cases.
#ifndef GORT_SELECT_H_
#define GORT_SELECT_H_

#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

#include "gort/chan.h"
#include "gort/internal/chan_impl.h"

namespace gort {

namespace internal {
// A receive case: `case v, ok := <-ch`.
template <class T>
struct RecvCaseOp {
  static constexpr bool kSend = false;
  hchan* c;
  T* out;
  bool* ok;
  alignas(T) unsigned char slot[sizeof(T)];
  // The storage the runtime receives into.
  void* Elem() { return slot; }
  // Delivers what the runtime received, once this case has run.
  void Finish(bool received) {
    if (received) {
      T* p = std::launder(reinterpret_cast<T*>(slot));
      if (out != nullptr) *out = std::move(*p);
      p->~T();
    } else if (out != nullptr) {
      if constexpr (std::is_default_constructible_v<T>) *out = T{};
    }
    if (ok != nullptr) *ok = received;
  }
};
// A send case holding a copy of its value: `case ch <- v` for an lvalue.
template <class T>
struct SendCaseOp {
  static constexpr bool kSend = true;
  hchan* c;
  T value;
  // The value the runtime moves from, only if this case runs.
  void* Elem() { return &value; }
  // Nothing to deliver.
  void Finish(bool) {}
};
// A send case naming the caller's rvalue: the runtime moves from *value only
// if this case runs, so a move-only value survives a case that loses.
template <class T>
struct SendRefOp {
  static constexpr bool kSend = true;
  hchan* c;
  T* value;
  // The value the runtime moves from, only if this case runs.
  void* Elem() { return value; }
  // Nothing to deliver.
  void Finish(bool) {}
};
// The default case.
struct DefaultCaseOp {
  static constexpr bool kDefault = true;
  // Nothing to run.
  void Finish() {}
};

// A receive case with a handler: OnRecv.
template <class T, class F>
struct OnRecvOp {
  static constexpr bool kSend = false;
  hchan* c;
  F fn;
  alignas(T) unsigned char slot[sizeof(T)];
  // The storage the runtime receives into.
  void* Elem() { return slot; }
  // Calls fn with the value received (moved), or T{} and false on a close.
  void Finish(bool received) {
    if (received) {
      T* p = std::launder(reinterpret_cast<T*>(slot));
      struct Destroy {
        T* p;
        ~Destroy() { p->~T(); }
      } destroy{p};
      Call(std::move(*p), true);
    } else if constexpr (std::is_invocable_v<F&>) {
      fn();
    } else {
      static_assert(std::is_default_constructible_v<T>,
                    "OnRecv: a handler taking the value of a type with no "
                    "default constructor cannot be told of a close; take "
                    "no argument or select on a Chan<std::optional<T>>");
      Call(T{}, false);
    }
  }
  // fn(v, ok), fn(v) or fn(), whichever F takes.
  void Call(T&& v, bool ok) {
    if constexpr (std::is_invocable_v<F&, T&&, bool>) {
      fn(std::move(v), ok);
    } else if constexpr (std::is_invocable_v<F&, T&&>) {
      fn(std::move(v));
    } else {
      static_assert(std::is_invocable_v<F&>,
                    "OnRecv: the handler takes (T, bool), (T) or ()");
      fn();
    }
  }
};

// A send case with a handler: the send op S, then fn().
template <class S, class F>
struct OnSendOp {
  static constexpr bool kSend = true;
  S op;
  F fn;
  hchan* c = op.c;
  // The value the runtime moves from, only if this case runs.
  void* Elem() { return op.Elem(); }
  // Calls fn after the send.
  void Finish(bool) { fn(); }
};

// The default case with a handler.
template <class F>
struct OnDefaultOp {
  static constexpr bool kDefault = true;
  F fn;
  // Calls fn.
  void Finish() { fn(); }
};

template <class C>
inline constexpr bool kIsDefault = requires {
  std::decay_t<C>::kDefault;
};

template <class C>
void FillCase(C& op, scase* sc, int* n) {
  if constexpr (!kIsDefault<C>) {
    sc[(*n)++] = scase{op.c, op.Elem(), std::decay_t<C>::kSend};
  }
}
}  // namespace internal

// A receive case for Select: on success stores into *out and *ok if given.
template <class T>
internal::RecvCaseOp<T> RecvCase(const Chan<T>& ch, T* out = nullptr,
                                 bool* ok = nullptr) {
  return internal::RecvCaseOp<T>{internal::ChanAccess::raw(ch), out, ok, {}};
}

// A send case for Select: sends the caller's value when chosen, moving from
// it then and only then (a move-only value is intact if another case runs).
// It refers to value: write it inside the Select call.
template <class T>
internal::SendRefOp<T> SendCase(const Chan<T>& ch,
                                std::type_identity_t<T>&& value) {
  return internal::SendRefOp<T>{internal::ChanAccess::raw(ch), &value};
}

// A send case for Select that sends a copy of value when chosen.
template <class T>
internal::SendCaseOp<T> SendCase(const Chan<T>& ch,
                                 const std::type_identity_t<T>& value) {
  static_assert(std::is_copy_constructible_v<T>,
                "SendCase: a move-only value is sent as SendCase(ch, "
                "std::move(v)), moved from only if its case runs");
  return internal::SendCaseOp<T>{internal::ChanAccess::raw(ch), value};
}

// The default case: chosen at once when no other case is ready.
inline internal::DefaultCaseOp DefaultCase() { return {}; }

// A receive case that calls fn(v, ok), fn(v) or fn() when it runs; ok is
// false (and v is T{}) once ch is closed and drained.
template <class T, class F>
internal::OnRecvOp<T, std::decay_t<F>> OnRecv(const Chan<T>& ch, F&& fn) {
  return {internal::ChanAccess::raw(ch), std::forward<F>(fn), {}};
}

// A send case that calls fn() after it sends; value is moved from only if
// this case runs. It refers to value: write it inside the Select call.
template <class T, class F>
internal::OnSendOp<internal::SendRefOp<T>, std::decay_t<F>> OnSend(
    const Chan<T>& ch, std::type_identity_t<T>&& value, F&& fn) {
  return {SendCase(ch, std::move(value)), std::forward<F>(fn)};
}

// A send case that sends a copy of value, then calls fn().
template <class T, class F>
internal::OnSendOp<internal::SendCaseOp<T>, std::decay_t<F>> OnSend(
    const Chan<T>& ch, const std::type_identity_t<T>& value, F&& fn) {
  return {SendCase(ch, value), std::forward<F>(fn)};
}

// The default case with a handler: calls fn() when nothing else is ready.
template <class F>
internal::OnDefaultOp<std::decay_t<F>> OnDefault(F&& fn) {
  return {std::forward<F>(fn)};
}

// Runs one ready case (chosen at random among ready ones), blocking until
// one is ready unless a default case is given; returns its argument index,
// after running the case's handler if it has one (OnRecv, OnSend,
// OnDefault), so a loop can end on a case: `if (Select(...) == 2) break;`.
// Forms mix: a RecvCase beside an OnSend is fine.
template <class... Cases>
int Select(Cases&&... cases) {
  constexpr int kAll = sizeof...(Cases);
  constexpr int kDefaults = (0 + ... + (internal::kIsDefault<Cases> ? 1 : 0));
  static_assert(kDefaults <= 1, "Select: more than one default case");
  constexpr int kN = kAll - kDefaults;
  internal::scase sc[kN > 0 ? kN : 1];
  std::uint16_t order[2 * (kN > 0 ? kN : 1)];
  int n = 0;
  (internal::FillCase(cases, sc, &n), ...);
  bool recvOK = false;
  [[maybe_unused]] int chosen =
      internal::selectgo(sc, kN, order, kDefaults == 0, &recvOK);
  // Map the index among real cases back to the argument index.
  [[maybe_unused]] int real = 0;
  [[maybe_unused]] int arg = 0;
  int result = -1;
  (
      [&](auto& op) {
        if constexpr (internal::kIsDefault<decltype(op)>) {
          if (chosen < 0) {
            result = arg;
            op.Finish();
          }
        } else {
          if (real == chosen) {
            result = arg;
            op.Finish(recvOK);
          }
          real++;
        }
        arg++;
      }(cases),
      ...);
  return result;
}

}  // namespace gort

#endif  // GORT_SELECT_H_
