// gort/internal/func.h: Func, the type-erased goroutine body behind Run and
// Go. A move-only callable invoked once, as an rvalue; small callables that
// move without throwing are stored inline (no allocation), others on the
// heap. It replaces absl::AnyInvocable so the public headers need only the
// standard library. Not part of the public API.
#ifndef GORT_INTERNAL_FUNC_H_
#define GORT_INTERNAL_FUNC_H_

#include <cstddef>
#include <functional>
#include <new>
#include <type_traits>
#include <utility>

namespace gort::internal {

// A move-only `void()` callable, called as an rvalue (std::move(f)()).
class Func {
 public:
  // Bytes of inline storage: three pointers, room for a lambda capturing a
  // channel handle, a pointer and an int without allocating.
  static constexpr std::size_t kInlineSize = 3 * sizeof(void*);
  // Alignment of the inline storage; more strictly aligned callables go to
  // the heap. Not alignof(std::max_align_t), which mingw i686 defines two
  // ways depending on which header came first.
  static constexpr std::size_t kInlineAlign = alignof(void*);

  // Whether a D is stored inline (no allocation).
  template <class D>
  static constexpr bool kStoredInline = sizeof(D) <= kInlineSize&& kInlineAlign
                                                         % alignof(D) ==
                                            0 &&
                                        std::is_nothrow_move_constructible_v<D>;

  // An empty Func.
  Func() noexcept = default;
  // An empty Func.
  Func(std::nullptr_t) noexcept {}  // NOLINT: implicit, as std::function's
  // A Func holding f, moved or copied in; f's result, if any, is dropped.
  template <class F, class D = std::decay_t<F>,
            class = std::enable_if_t<!std::is_same_v<D, Func> &&
                                     std::is_invocable_v<D&&> &&
                                     std::is_constructible_v<D, F&&>>>
  Func(F&& f) {  // NOLINT: implicit, as std::function's
    if constexpr (kStoredInline<D>) {
      ::new (static_cast<void*>(storage_.bytes)) D(std::forward<F>(f));
    } else {
      storage_.heap = new D(std::forward<F>(f));
    }
    ops_ = &kOps<D>;
  }
  // Takes other's callable; other becomes empty.
  Func(Func&& other) noexcept { Take(other); }
  // Destroys this callable and takes other's; other becomes empty.
  Func& operator=(Func&& other) noexcept {
    if (this != &other) {
      Reset();
      Take(other);
    }
    return *this;
  }
  // Destroys the callable; the Func becomes empty.
  Func& operator=(std::nullptr_t) noexcept {
    Reset();
    return *this;
  }
  // Not copyable: the callable may be move-only.
  Func(const Func&) = delete;
  // Not copyable.
  Func& operator=(const Func&) = delete;
  // Destroys the callable.
  ~Func() { Reset(); }

  // True unless empty.
  explicit operator bool() const noexcept { return ops_ != nullptr; }
  // Calls the callable as an rvalue; it stays stored until the Func is
  // reset or destroyed. Calling an empty Func is undefined.
  void operator()() && { ops_->call(&storage_); }

 private:
  union Storage {
    void* heap;
    alignas(kInlineAlign) unsigned char bytes[kInlineSize];
  };
  // What a Func does with one callable type.
  struct Ops {
    void (*call)(Storage* s);
    void (*relocate)(Storage* dst, Storage* src) noexcept;  // move + destroy
    void (*destroy)(Storage* s) noexcept;
  };

  template <class D>
  static D* Get(Storage* s) noexcept {
    if constexpr (kStoredInline<D>) {
      return std::launder(reinterpret_cast<D*>(s->bytes));
    } else {
      return static_cast<D*>(s->heap);
    }
  }
  template <class D>
  static void Call(Storage* s) {
    std::invoke(std::move(*Get<D>(s)));
  }
  template <class D>
  static void Relocate(Storage* dst, Storage* src) noexcept {
    if constexpr (kStoredInline<D>) {
      D* from = Get<D>(src);
      ::new (static_cast<void*>(dst->bytes)) D(std::move(*from));
      from->~D();
    } else {
      dst->heap = src->heap;
    }
  }
  template <class D>
  static void Destroy(Storage* s) noexcept {
    if constexpr (kStoredInline<D>) {
      Get<D>(s)->~D();
    } else {
      delete Get<D>(s);
    }
  }
  template <class D>
  static constexpr Ops kOps = {&Call<D>, &Relocate<D>, &Destroy<D>};

  void Take(Func& other) noexcept {
    if (other.ops_ == nullptr) return;
    other.ops_->relocate(&storage_, &other.storage_);
    ops_ = std::exchange(other.ops_, nullptr);
  }
  void Reset() noexcept {
    if (const Ops* ops = std::exchange(ops_, nullptr)) ops->destroy(&storage_);
  }

  Storage storage_;
  const Ops* ops_ = nullptr;
};

}  // namespace gort::internal

#endif  // GORT_INTERNAL_FUNC_H_
