// examples/echo.cc: a TCP echo server and a small load client in one
// program. Every connection gets its own goroutine, as in Go; a goroutine
// waiting for bytes parks on the network poller, so a few threads serve
// them all.
//
//   gort-example-echo [connections] [messages per connection]
//   gort-example-echo serve 127.0.0.1:7000     # only the server
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gort/gort.h"

namespace {

// Serves one connection: whatever arrives goes back until EOF.
void Serve(gort::net::Conn c) {
  char buf[4096];
  try {
    while (std::size_t n = c.Read(buf, sizeof buf)) c.Write(buf, n);
  } catch (const gort::net::Error& e) {
    std::fprintf(stderr, "echo: %s\n", e.what());
  }
}

// Accepts connections forever (until the listener is closed).
// The Try form reads as Go's `c, err := ln.Accept(); if err != nil {...}`.
void AcceptLoop(gort::net::Listener* ln) {
  for (;;) {
    gort::net::Result<gort::net::Conn> c = ln->TryAccept();
    if (!c) {
      if (!c.error()->Closed()) {
        std::fprintf(stderr, "echo: %s\n", c.error()->what());
      }
      return;
    }
    gort::Go([c = std::move(*c)]() mutable { Serve(std::move(c)); });
  }
}

// One client: sends `messages` lines and checks each echo.
bool Client(const std::string& addr, int id, int messages) {
  gort::net::Conn c = gort::net::Dial("tcp", addr);
  c.SetDeadline(std::chrono::steady_clock::now() + std::chrono::seconds(30));
  for (int i = 0; i < messages; i++) {
    std::string msg =
        "client " + std::to_string(id) + " message " + std::to_string(i) + "\n";
    c.Write(msg.data(), msg.size());
    std::string back(msg.size(), '\0');
    for (std::size_t got = 0; got < back.size();) {
      std::size_t n = c.Read(back.data() + got, back.size() - got);
      if (n == 0) return false;
      got += n;
    }
    if (back != msg) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "serve") == 0) {
    gort::Run([addr = std::string(argv[2])] {
      gort::net::Listener ln = gort::net::Listen("tcp", addr);
      std::printf("echo: listening on %s\n", ln.Addr().c_str());
      std::fflush(stdout);
      AcceptLoop(&ln);
    });
    return 0;
  }
  int conns = argc > 1 ? std::atoi(argv[1]) : 100;
  int messages = argc > 2 ? std::atoi(argv[2]) : 1000;
  if (conns < 1 || messages < 1) {
    std::fprintf(stderr, "usage: %s [connections] [messages]\n", argv[0]);
    return 2;
  }
  int failed = 0;
  gort::Run([&] {
    gort::net::Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
    gort::Go([&ln] { AcceptLoop(&ln); });
    auto t0 = std::chrono::steady_clock::now();
    gort::WaitGroup wg;
    gort::Mutex mu;
    for (int i = 0; i < conns; i++) {
      wg.Go([&, i] {
        bool ok = false;
        try {
          ok = Client(ln.Addr(), i, messages);
        } catch (const gort::net::Error& e) {
          std::fprintf(stderr, "client %d: %s\n", i, e.what());
        }
        if (!ok) {
          mu.Lock();
          failed++;
          mu.Unlock();
        }
      });
    }
    wg.Wait();
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    gort::Stats st = gort::ReadStats();
    std::printf(
        "echo: %d connections x %d messages on %s: %.0f round trips/s, "
        "%d OS threads, GOMAXPROCS %d, %d failed\n",
        conns, messages, ln.Addr().c_str(),
        static_cast<double>(conns) * messages / s, st.threads, st.gomaxprocs,
        failed);
    ln.Close();
  });
  return failed == 0 ? 0 : 1;
}
