// gort/chan.h: typed channels (Go's chan T), on the runtime's hchan.
#ifndef GORT_CHAN_H_
#define GORT_CHAN_H_

#include <cstddef>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <type_traits>
#include <utility>

#include "gort/internal/chan_impl.h"

namespace gort {

template <class T>
class Chan;

namespace internal {
// The runtime channel behind a Chan, for Select and the runtime's timers;
// not part of the public API.
struct ChanAccess {
  // ch's hchan (nullptr for a nil channel).
  template <class T>
  static hchan* raw(const Chan<T>& ch) {
    return ch.c_;
  }
};
}  // namespace internal

// Makes a channel of T with buffer capacity cap (make(chan T, cap)).
template <class T>
Chan<T> MakeChan(std::size_t cap = 0);

// A channel handle: cheap to copy, all copies name the same channel; a
// default-constructed Chan is nil.
template <class T>
class Chan {
 public:
  // A nil channel: sends and receives block forever.
  Chan() = default;
  // Another handle to the same channel.
  Chan(const Chan& other) : c_(other.c_) {
    if (c_ != nullptr) internal::chanref(c_);
  }
  // Takes other's channel; other becomes nil.
  Chan(Chan&& other) noexcept : c_(std::exchange(other.c_, nullptr)) {}
  // Names other's channel.
  Chan& operator=(const Chan& other) {
    Chan(other).swap(*this);
    return *this;
  }
  // Takes other's channel; other becomes nil.
  Chan& operator=(Chan&& other) noexcept {
    Chan(std::move(other)).swap(*this);
    return *this;
  }
  // Drops this handle; the channel lives while any handle or waiter does.
  ~Chan() {
    if (c_ != nullptr) internal::chanunref(c_);
  }

  // Sends v, blocking until a receiver or buffer space takes it (ch <- v).
  void Send(T v) const { internal::chansend(c_, &v); }
  // Receives a value; T{} once the channel is closed and drained (<-ch).
  T Recv() const {
    static_assert(std::is_default_constructible_v<T>,
                  "Chan<T>::Recv returns T{} on a closed channel, and T has "
                  "no default constructor: use RecvOk() (v, ok := <-ch)");
    Slot s;
    if (!internal::chanrecv(c_, s.bytes)) {
      if constexpr (std::is_default_constructible_v<T>) return T{};
      std::abort();  // unreachable: the static_assert fired
    }
    return s.Take();
  }
  // Receives a value; nullopt once closed and drained (v, ok := <-ch).
  [[nodiscard]] std::optional<T> RecvOk() const {
    Slot s;
    if (!internal::chanrecv(c_, s.bytes)) return std::nullopt;
    return std::optional<T>(s.Take());
  }
  // An input iterator over received values, for `for (auto v : ch)`.
  class Iterator {
   public:
    using value_type = T;                    // The element type.
    using difference_type = std::ptrdiff_t;  // Required of an iterator.
    // Receives the first value (or the end, if closed and drained).
    explicit Iterator(const Chan* ch) : ch_(ch), v_(ch->RecvOk()) {}
    // The value received last, to be moved from.
    T&& operator*() const { return std::move(*v_); }
    // Receives the next value.
    Iterator& operator++() {
      v_ = ch_->RecvOk();
      return *this;
    }
    // The same as ++it (an input iterator's postfix form).
    void operator++(int) { ++*this; }
    // True once the channel is closed and drained.
    friend bool operator==(const Iterator& it, std::default_sentinel_t) {
      return !it.v_.has_value();
    }

   private:
    const Chan* ch_;
    mutable std::optional<T> v_;
  };
  // Receives until the channel is closed and drained (for v := range ch).
  Iterator begin() const { return Iterator(this); }
  // The end of a range over the channel: closed and drained.
  std::default_sentinel_t end() const { return {}; }

  // Closes the channel (close(ch)).
  void Close() const { internal::closechan(c_); }
  // Number of buffered elements (len(ch)).
  [[nodiscard]] std::size_t Len() const { return internal::chanlen(c_); }
  // Buffer capacity (cap(ch)).
  [[nodiscard]] std::size_t Cap() const { return internal::chancap(c_); }
  // True unless nil.
  explicit operator bool() const { return c_ != nullptr; }
  // True if both name the same channel (or both are nil).
  friend bool operator==(const Chan& a, const Chan& b) { return a.c_ == b.c_; }
  // Swaps two handles.
  void swap(Chan& other) noexcept { std::swap(c_, other.c_); }

 private:
  friend struct internal::ChanAccess;
  friend Chan MakeChan<T>(std::size_t cap);
  // Storage that a receive constructs a T in.
  struct Slot {
    alignas(T) unsigned char bytes[sizeof(T)];
    T Take() {
      T* p = std::launder(reinterpret_cast<T*>(bytes));
      T v(std::move(*p));
      p->~T();
      return v;
    }
  };
  explicit Chan(internal::hchan* c) : c_(c) {}
  internal::hchan* c_ = nullptr;
};

// Chan<void> is an error: Go's chan struct{} is Chan<std::monostate>.
template <class T>
requires std::is_void_v<T>
class Chan<T> {
  static_assert(!std::is_void_v<T>,
                "Chan<void>: a channel of no value is Chan<std::monostate> "
                "(Go's chan struct{}), made by MakeChan<std::monostate>()");
};

template <class T>
Chan<T> MakeChan(std::size_t cap) {
  if constexpr (std::is_void_v<T>) {
    static_assert(!std::is_void_v<T>,
                  "MakeChan<void>: use MakeChan<std::monostate>() (Go's "
                  "chan struct{})");
    return {};
  } else {
    static_assert(std::is_move_constructible_v<T>,
                  "channel element type must be movable");
    return Chan<T>(internal::makechan(&internal::kElemOps<T>, cap));
  }
}

}  // namespace gort

#endif  // GORT_CHAN_H_
