// pkg/hooks/real.cc: resolving libc's versions of the hooked calls.
//
// The hooks are defined in the program (libgort-hooks.a, linked into the
// executable and exported to its dynamic symbol table), so every shared
// library's reference to read, poll, ... binds to them, and
// dlsym(RTLD_NEXT, "read") from here finds libc's. The table is filled by a
// load-time constructor; a call that arrives earlier (another constructor)
// fills it on the spot. Filling twice stores the same values, so no lock is
// needed.
#include "hooks/real.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>

namespace gort::hooks {

namespace {

realFns table;
std::atomic<bool> resolved{false};

// sym: one symbol after ours, or abort (a libc without it cannot run the
// hooks at all).
template <class F>
void sym(F*& slot, const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (p == nullptr) std::abort();
  slot = reinterpret_cast<F*>(p);
}

void resolve() {
  sym(table.socket, "socket");
  sym(table.socketpair, "socketpair");
  sym(table.connect, "connect");
  sym(table.accept, "accept");
  sym(table.accept4, "accept4");
  sym(table.read, "read");
  sym(table.write, "write");
  sym(table.readv, "readv");
  sym(table.writev, "writev");
  sym(table.recv, "recv");
  sym(table.recvfrom, "recvfrom");
  sym(table.recvmsg, "recvmsg");
  sym(table.send, "send");
  sym(table.sendto, "sendto");
  sym(table.sendmsg, "sendmsg");
  sym(table.poll, "poll");
  sym(table.ppoll, "ppoll");
  sym(table.select, "select");
  sym(table.close, "close");
  sym(table.dup, "dup");
  sym(table.dup2, "dup2");
  sym(table.dup3, "dup3");
  sym(table.fcntl, "fcntl");
  sym(table.setsockopt, "setsockopt");
  sym(table.nanosleep, "nanosleep");
  sym(table.clock_nanosleep, "clock_nanosleep");
  sym(table.usleep, "usleep");
  sym(table.sleep, "sleep");
  sym(table.getaddrinfo, "getaddrinfo");
  sym(table.gethostbyname_r, "gethostbyname_r");
  resolved.store(true, std::memory_order_release);
}

// Resolve at load time, before main and before most constructors.
__attribute__((constructor(101))) void resolveAtLoad() { resolve(); }

}  // namespace

const realFns& real() {
  if (!resolved.load(std::memory_order_acquire)) resolve();
  return table;
}

}  // namespace gort::hooks
