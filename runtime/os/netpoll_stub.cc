// runtime/os/netpoll_stub.cc: the poller seam on an OS without a backend yet
// (Windows, until netpoll_windows.cc with an I/O completion port exists).
// The scheduler sees a poller that is never initialised, so it keeps its
// timer sleeper; registering a descriptor fails with "not supported".
#include <cerrno>

#include "os/netpoll_os.h"

namespace gort::os {

bool netpollSupported() { return false; }
int netpollinit() { return ENOSYS; }
void netpollfini() {}
bool netpollIsPollDescriptor(std::uintptr_t) { return false; }
int netpollopen(std::uintptr_t, std::uint64_t) { return ENOSYS; }
int netpollclose(std::uintptr_t) { return ENOSYS; }
int netpollBreak() { return 0; }
std::int32_t netpoll(std::int64_t, bool, PollEvent*, std::int32_t) { return 0; }
const char* netpollHighResMethod() { return "none"; }

}  // namespace gort::os
