// gort/internal/chan_impl.h: the type-erased channel runtime behind Chan<T>
// and Select (runtime/chan.cc and runtime/select.cc implement it). Not part
// of the public API.
#ifndef GORT_INTERNAL_CHAN_IMPL_H_
#define GORT_INTERNAL_CHAN_IMPL_H_

#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

namespace gort::internal {

// How the runtime moves and destroys elements of one channel type.
struct ElemOps {
  std::size_t size;                    // sizeof(T)
  std::size_t align;                   // alignof(T)
  void (*move)(void* dst, void* src);  // constructs *dst from move(*src)
  void (*destroy)(void* p);            // runs ~T on *p
};

// The ElemOps of T.
template <class T>
inline constexpr ElemOps kElemOps = {
    sizeof(T),
    alignof(T),
    [](void* dst, void* src) {
      ::new (dst) T(std::move(*static_cast<T*>(src)));
    },
    [](void* p) { static_cast<T*>(p)->~T(); },
};

// The runtime's channel (Go's hchan (chan.go:33)); defined in runtime/chan.h.
struct hchan;

// makechan: make(chan T, size); panics on a size out of range.
hchan* makechan(const ElemOps* ops, std::size_t size);
// chanref / chanunref: reference counting of channel handles.
void chanref(hchan* c);
void chanunref(hchan* c);
// chansend: c <- *ep, blocking; *ep is moved from.
void chansend(hchan* c, void* ep);
// chanrecv: receives into raw storage ep; false (nothing constructed) if c
// is closed and drained.
bool chanrecv(hchan* c, void* ep);
// closechan: close(c).
void closechan(hchan* c);
// chanlen / chancap: len(c) and cap(c); 0 for nil.
std::size_t chanlen(hchan* c);
std::size_t chancap(hchan* c);

// One case of a select (Go's scase (select.go:20)): elem is the value to send,
// or raw storage to receive into.
struct scase {
  hchan* c;
  void* elem;
  bool send;
};

// selectgo: runs one ready case, or blocks until one is, unless block is
// false; returns the case index or -1; *recvOK tells a receive from a close.
// order must have room for 2 * n entries.
int selectgo(scase* cases, int n, std::uint16_t* order, bool block,
             bool* recvOK);

}  // namespace gort::internal

#endif  // GORT_INTERNAL_CHAN_IMPL_H_
