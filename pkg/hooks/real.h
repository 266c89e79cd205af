// pkg/hooks/real.h: libc's own versions of the calls gort::hooks replaces,
// found with dlsym(RTLD_NEXT) (the next definition after the hooks in the
// dynamic linker's search order: libc's). Linux only.
#ifndef GORT_PKG_HOOKS_REAL_H_
#define GORT_PKG_HOOKS_REAL_H_

#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

namespace gort::hooks {

// The real functions, one pointer each; resolved at load time (and on first
// use, for calls made before the hooks' constructor ran).
struct realFns {
  int (*socket)(int, int, int);
  int (*socketpair)(int, int, int, int*);
  int (*connect)(int, const sockaddr*, socklen_t);
  int (*accept)(int, sockaddr*, socklen_t*);
  int (*accept4)(int, sockaddr*, socklen_t*, int);
  ssize_t (*read)(int, void*, size_t);
  ssize_t (*write)(int, const void*, size_t);
  ssize_t (*readv)(int, const iovec*, int);
  ssize_t (*writev)(int, const iovec*, int);
  ssize_t (*recv)(int, void*, size_t, int);
  ssize_t (*recvfrom)(int, void*, size_t, int, sockaddr*, socklen_t*);
  ssize_t (*recvmsg)(int, msghdr*, int);
  ssize_t (*send)(int, const void*, size_t, int);
  ssize_t (*sendto)(int, const void*, size_t, int, const sockaddr*, socklen_t);
  ssize_t (*sendmsg)(int, const msghdr*, int);
  int (*poll)(pollfd*, nfds_t, int);
  int (*ppoll)(pollfd*, nfds_t, const timespec*, const sigset_t*);
  int (*select)(int, fd_set*, fd_set*, fd_set*, timeval*);
  int (*close)(int);
  int (*dup)(int);
  int (*dup2)(int, int);
  int (*dup3)(int, int, int);
  int (*fcntl)(int, int, ...);
  int (*setsockopt)(int, int, int, const void*, socklen_t);
  int (*nanosleep)(const timespec*, timespec*);
  int (*clock_nanosleep)(clockid_t, int, const timespec*, timespec*);
  int (*usleep)(useconds_t);
  unsigned (*sleep)(unsigned);
  int (*getaddrinfo)(const char*, const char*, const addrinfo*, addrinfo**);
  int (*gethostbyname_r)(const char*, hostent*, char*, size_t, hostent**, int*);
};

// real: the table, resolved (every pointer set) on return.
const realFns& real();

}  // namespace gort::hooks

#endif  // GORT_PKG_HOOKS_REAL_H_
