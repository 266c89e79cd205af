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
  hchan* c;
  T* out;
  bool* ok;
  alignas(T) unsigned char slot[sizeof(T)];
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
  hchan* c;
  T value;
  // The value the runtime moves from, only if this case runs.
  void* Elem() { return &value; }
};
// A send case naming the caller's rvalue: the runtime moves from *value only
// if this case runs, so a move-only value survives a case that loses.
template <class T>
struct SendRefOp {
  hchan* c;
  T* value;
  // The value the runtime moves from, only if this case runs.
  void* Elem() { return value; }
};
// The default case.
struct DefaultCaseOp {};

template <class C>
inline constexpr bool kIsDefault = std::is_same_v<std::decay_t<C>, DefaultCaseOp>;

template <class C>
void FillCase(C& op, scase* sc, int* n) {
  if constexpr (!kIsDefault<C>) {
    if constexpr (requires { op.value; }) {
      sc[(*n)++] = scase{op.c, op.Elem(), true};
    } else {
      sc[(*n)++] = scase{op.c, op.slot, false};
    }
  }
}

template <class C>
void FinishCase(C& op, bool recvOK) {
  if constexpr (!kIsDefault<C>) {
    if constexpr (!requires { op.value; }) op.Finish(recvOK);
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

// Runs one ready case (chosen at random among ready ones), blocking until
// one is ready unless a DefaultCase is given; returns its argument index.
template <class... Cases>
int Select(Cases&&... cases) {
  constexpr int kAll = sizeof...(Cases);
  constexpr int kDefaults = (0 + ... + (internal::kIsDefault<Cases> ? 1 : 0));
  static_assert(kDefaults <= 1, "Select: more than one DefaultCase");
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
          if (chosen < 0) result = arg;
        } else {
          if (real == chosen) {
            internal::FinishCase(op, recvOK);
            result = arg;
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
