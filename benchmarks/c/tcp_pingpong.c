/* benchmarks/c/tcp_pingpong.c: the floor under gort's TCP ping-pong: the op of
 * benchmarks/net_loops.h's TCPPingPong and TCPPingPong100 written as plain C
 * with one thread and one epoll loop, no runtime at all, so that gort-compare
 * can judge how much a network round trip costs gort above what the kernel asks
 * for.
 *
 * The same op as net_loops.h and its Go twin (benchmarks/go/net.go):
 * - TCPPingPong: one loopback connection, TCP_NODELAY on (Go's and gort's
 *   default); the client writes one byte, the server end echoes it, the
 *   client checks it; n times (time per op is a round trip).
 * - TCPPingPong100: 100 loopback connections ping-pong at once, each with
 *   its share of the n round trips (n/100, the first n%100 one more).
 * Listening, dialling and accepting are inside the timed run, as in the
 * twins. Every socket is non-blocking and level-triggered in one epoll set;
 * a readable server end is read and echoed, a readable client end is read,
 * checked and sent its next byte. Nothing reads speculatively: a read is
 * issued only for an end epoll reported readable.
 *
 * Usage:
 *   gort-tcp-floor-c -bench=TCPPingPong|TCPPingPong100|. [-benchtime=200ms|Nx]
 *                    [-count=N] [-protocol] [-eager] [-list]
 * Without -protocol it prints Go benchmark lines
 * ("BenchmarkTCPPingPong-c-1  N  X ns/op"; the -1 is its one thread); with
 * -protocol it speaks gort-compare's child line protocol, as gortbench-go
 * does ("step ..." before each timed run, "result n= ns= cpu-ns=
 * ns-per-op=" at the end). N grows as in go test (predictN) until one timed
 * run lasts -benchtime. -procs is accepted and ignored (one thread).
 * -eager (a diagnostic, not the floor): every end also tries a read before
 * waiting, as Go's Conn.Read does, so it makes the reads that find nothing
 * (EAGAIN) that gort and Go make; the difference between the two C loops is
 * what that API costs, the rest of gort's is the scheduler's. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { kMaxConns = 100, kEvents = 256 };

static const int64_t kMaxN = 1000000000; /* Go's cap on b.N */

/* A benchmark: its name and number of connections. */
struct bench {
  const char *name;
  int conns;
};

static const struct bench kBenches[] = {
    {"TCPPingPong", 1},
    {"TCPPingPong100", kMaxConns},
};

/* One end of a connection in the epoll set (its index is the event's
 * data). */
struct end {
  int fd;
  int client;   /* 1: the dialling side; 0: the accepted (echoing) side */
  int64_t left; /* client: round trips still to start */
  int64_t sent; /* client: round trips started (the byte is its low 8) */
};

/* Prints "gort-tcp-floor-c: what[: errno text]" and exits 1. */
static void fail(const char *what, int err) {
  if (err != 0) {
    fprintf(stderr, "gort-tcp-floor-c: %s: %s\n", what, strerror(err));
  } else {
    fprintf(stderr, "gort-tcp-floor-c: %s\n", what);
  }
  exit(1);
}

static int64_t nanotime(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t cpu_nanos(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
         ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

/* Sets TCP_NODELAY, as Go's and gort's Dial and Accept do. */
static void no_delay(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
    fail("setsockopt TCP_NODELAY", errno);
  }
}

/* A listening socket on 127.0.0.1 with a kernel-chosen port in *addr. */
static int listen_loopback(struct sockaddr_in *addr) {
  int ln = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (ln < 0) fail("socket", errno);
  memset(addr, 0, sizeof *addr);
  addr->sin_family = AF_INET;
  addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof *addr;
  if (bind(ln, (struct sockaddr *)addr, len) != 0) fail("bind", errno);
  if (listen(ln, 4096) != 0) fail("listen", errno);
  if (getsockname(ln, (struct sockaddr *)addr, &len) != 0) {
    fail("getsockname", errno);
  }
  return ln;
}

/* Dials addr (a blocking connect, then non-blocking). */
static int dial(const struct sockaddr_in *addr) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("socket", errno);
  if (connect(fd, (const struct sockaddr *)addr, sizeof *addr) != 0) {
    fail("connect", errno);
  }
  if (fcntl(fd, F_SETFL, O_NONBLOCK) != 0) fail("fcntl O_NONBLOCK", errno);
  no_delay(fd);
  return fd;
}

/* Accepts one connection, non-blocking. */
static int accept_one(int ln) {
  int fd = accept4(ln, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) fail("accept4", errno);
  no_delay(fd);
  return fd;
}

/* Writes the one byte b (a loopback socket with room for it takes it
 * whole). */
static void send_byte(int fd, unsigned char b) {
  ssize_t w;
  do {
    w = write(fd, &b, 1);
  } while (w < 0 && errno == EINTR);
  if (w != 1) fail("write", w < 0 ? errno : 0);
}

/* Writes buf[0..n) back (the echo). */
static void send_all(int fd, const unsigned char *buf, ssize_t n) {
  while (n > 0) {
    ssize_t w = write(fd, buf, (size_t)n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail("echo write", w < 0 ? errno : 0);
    buf += w;
    n -= w;
  }
}

/* Reads what end e has; 0 when nothing is there after all (EAGAIN). */
static ssize_t read_some(const struct end *e, unsigned char *buf, size_t size) {
  ssize_t r;
  do {
    r = read(e->fd, buf, size);
  } while (r < 0 && errno == EINTR);
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
  if (r < 0) fail("read", errno);
  if (r == 0) fail("unexpected EOF", 0);
  return r;
}

/* -eager: read as Go's and gort's Conn.Read do, trying the read before
 * waiting and waiting (here: returning to epoll_wait) only when it finds
 * nothing, so each end also makes the read that fails with EAGAIN. A
 * diagnostic: it costs the C loop the syscalls that API costs gort. */
static int eager;

/* A readable client end: checks each echoed byte and starts the next round
 * trip; returns how many round trips it completed. */
static int64_t client_ready(struct end *e) {
  unsigned char buf[64];
  int64_t done = 0;
  ssize_t r;
  while ((r = read_some(e, buf, sizeof buf)) > 0) {
    /* One byte is in flight at a time: exactly it comes back. */
    if (r != 1 || buf[0] != (unsigned char)(e->sent - 1)) {
      fail("wrong byte echoed", 0);
    }
    done++;
    if (e->left == 0) break;
    send_byte(e->fd, (unsigned char)e->sent);
    e->sent++;
    e->left--;
    if (!eager) break;
  }
  return done;
}

/* A readable server end: echoes what it reads (with -eager, until a read
 * finds nothing). */
static void server_ready(struct end *e) {
  unsigned char buf[64];
  ssize_t r;
  while ((r = read_some(e, buf, sizeof buf)) > 0) {
    send_all(e->fd, buf, r);
    if (!eager) break;
  }
}

/* Adds ends[i] to the epoll set ep, level-triggered for input. */
static void watch(int ep, struct end *ends, int i) {
  struct epoll_event ev;
  memset(&ev, 0, sizeof ev);
  ev.events = EPOLLIN;
  ev.data.u32 = (uint32_t)i;
  if (epoll_ctl(ep, EPOLL_CTL_ADD, ends[i].fd, &ev) != 0) {
    fail("epoll_ctl", errno);
  }
}

/* Sets up conns connections (ends[0..conns) the clients, ends[conns..2conns)
 * the accepted ends) in a new epoll set, and returns it. */
static int connect_all(struct end *ends, int conns, int64_t n) {
  struct sockaddr_in addr;
  int ln = listen_loopback(&addr);
  for (int k = 0; k < conns; ++k) {
    ends[k].fd = dial(&addr);
    ends[k].client = 1;
    ends[k].left = n / conns + (k < n % conns ? 1 : 0);
    ends[k].sent = 0;
  }
  for (int k = 0; k < conns; ++k) {
    ends[conns + k].fd = accept_one(ln);
    ends[conns + k].client = 0;
  }
  close(ln);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) fail("epoll_create1", errno);
  for (int i = 0; i < 2 * conns; ++i) watch(ep, ends, i);
  return ep;
}

/* The timed op, n times: conns connections, n round trips in all. */
static void ping_pong(int64_t n, int conns) {
  struct end ends[2 * kMaxConns];
  int ep = connect_all(ends, conns, n);
  for (int k = 0; k < conns; ++k) {
    if (ends[k].left == 0) continue;
    send_byte(ends[k].fd, 0);
    ends[k].sent = 1;
    ends[k].left--;
  }
  struct epoll_event evs[kEvents];
  for (int64_t done = 0; done < n;) {
    int got = epoll_wait(ep, evs, kEvents, -1);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail("epoll_wait", errno);
    for (int i = 0; i < got; ++i) {
      struct end *e = &ends[evs[i].data.u32];
      if (e->client) {
        done += client_ready(e);
      } else {
        server_ready(e);
      }
    }
  }
  for (int i = 0; i < 2 * conns; ++i) close(ends[i].fd);
  close(ep);
}

/* package testing's predictN: aim for goal with 20% headroom, grow at most
 * 100x and at least by one. */
static int64_t predict_n(int64_t goal, int64_t prev_n, int64_t prev_ns) {
  if (prev_ns <= 0) prev_ns = 1;
  /* In floating point: goal * prev_n can overflow 64 bits. */
  double want = (double)goal * (double)prev_n / (double)prev_ns;
  int64_t n = want > (double)kMaxN ? kMaxN : (int64_t)want;
  n += n / 5;
  if (n > 100 * prev_n) n = 100 * prev_n;
  if (n < prev_n + 1) n = prev_n + 1;
  if (n > kMaxN) n = kMaxN;
  return n;
}

/* -benchtime: a duration ("200ms", "1s", "1.5s", "250us") in *goal_ns, or
 * a fixed count ("100x") in *fixed_n; 0 if it is neither. */
static int parse_benchtime(const char *s, int64_t *goal_ns, int64_t *fixed_n) {
  char *end = NULL;
  double v = strtod(s, &end);
  if (end == s || !(v > 0)) return 0;
  *goal_ns = 0;
  *fixed_n = 0;
  if (strcmp(end, "x") == 0) {
    if (v != (double)(int64_t)v || v > (double)kMaxN) return 0;
    *fixed_n = (int64_t)v;
    return 1;
  }
  static const struct {
    const char *unit;
    double ns;
  } units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}};
  for (size_t i = 0; i < sizeof units / sizeof units[0]; ++i) {
    if (strcmp(end, units[i].unit) == 0) {
      *goal_ns = (int64_t)(v * units[i].ns);
      return *goal_ns > 0;
    }
  }
  return 0;
}

/* What a measurement found: the last timed run. */
struct result {
  int64_t n, ns, cpu_ns;
};

/* One timed run of b with n round trips. */
static struct result timed_run(const struct bench *b, int64_t n, int protocol) {
  if (protocol) {
    printf("step timed loop with N=%lld\n", (long long)n);
    fflush(stdout);
  }
  struct result r;
  int64_t c0 = cpu_nanos();
  int64_t t0 = nanotime();
  ping_pong(n, b->conns);
  r.ns = nanotime() - t0;
  r.cpu_ns = cpu_nanos() - c0;
  r.n = n;
  return r;
}

/* One measurement of b, N grown as go test grows it. */
static struct result measure(const struct bench *b, int64_t goal_ns,
                             int64_t fixed_n, int protocol) {
  if (fixed_n > 0) return timed_run(b, fixed_n, protocol);
  struct result r = timed_run(b, 1, protocol);
  while (r.ns < goal_ns && r.n < kMaxN) {
    r = timed_run(b, predict_n(goal_ns, r.n, r.ns), protocol);
  }
  return r;
}

/* Prints r as the protocol's result line or as a Go benchmark line. */
static void report(const struct bench *b, struct result r, int protocol) {
  double per_op = (double)r.ns / (double)r.n;
  if (protocol) {
    printf("result n=%lld ns=%lld cpu-ns=%lld ns-per-op=%.4g\n", (long long)r.n,
           (long long)r.ns, (long long)r.cpu_ns, per_op);
  } else {
    printf("Benchmark%s-c%s-1\t%8lld\t%10.0f ns/op\t%6.2f cpus\n", b->name,
           eager ? "-eager" : "", (long long)r.n, per_op,
           r.ns > 0 ? (double)r.cpu_ns / r.ns : 0.0);
  }
  fflush(stdout);
}

static void usage(void) {
  fprintf(stderr,
          "usage: gort-tcp-floor-c -bench=NAME|. [-benchtime=200ms|Nx] "
          "[-count=N] [-protocol] [-eager] [-list]\n");
  exit(2);
}

/* The value of flag arg if it is -name=VALUE or --name=VALUE, else NULL. */
static const char *flag_value(const char *arg, const char *name) {
  if (arg[0] != '-') return NULL;
  arg += arg[1] == '-' ? 2 : 1;
  size_t len = strlen(name);
  if (strncmp(arg, name, len) != 0 || arg[len] != '=') return NULL;
  return arg + len + 1;
}

/* Whether arg is the boolean flag -name or --name. */
static int flag_set(const char *arg, const char *name) {
  if (arg[0] != '-') return 0;
  arg += arg[1] == '-' ? 2 : 1;
  return strcmp(arg, name) == 0;
}

int main(int argc, char **argv) {
  const char *name = ".";
  int64_t goal_ns = 200000000, fixed_n = 0, count = 1;
  int protocol = 0;
  for (int i = 1; i < argc; ++i) {
    const char *v;
    if ((v = flag_value(argv[i], "bench")) != NULL) {
      name = v;
    } else if ((v = flag_value(argv[i], "benchtime")) != NULL) {
      if (!parse_benchtime(v, &goal_ns, &fixed_n)) usage();
    } else if ((v = flag_value(argv[i], "count")) != NULL) {
      count = strtoll(v, NULL, 10);
      if (count <= 0) usage();
    } else if (flag_value(argv[i], "procs") != NULL) {
      /* One thread whatever GOMAXPROCS the driver runs it at. */
    } else if (flag_set(argv[i], "protocol")) {
      protocol = 1;
    } else if (flag_set(argv[i], "eager")) {
      eager = 1;
    } else if (flag_set(argv[i], "list")) {
      for (size_t k = 0; k < sizeof kBenches / sizeof kBenches[0]; ++k) {
        printf("Benchmark%s\n", kBenches[k].name);
      }
      return 0;
    } else {
      usage();
    }
  }
  if (strncmp(name, "Benchmark", 9) == 0) name += 9;
  int ran = 0;
  for (size_t k = 0; k < sizeof kBenches / sizeof kBenches[0]; ++k) {
    const struct bench *b = &kBenches[k];
    if (strcmp(name, ".") != 0 && strcmp(name, b->name) != 0) continue;
    for (int64_t c = 0; c < count; ++c) {
      report(b, measure(b, goal_ns, fixed_n, protocol), protocol);
    }
    ran = 1;
  }
  if (!ran) {
    fprintf(stderr, "gort-tcp-floor-c: unknown benchmark %s (see -list)\n",
            name);
    return 2;
  }
  return 0;
}
