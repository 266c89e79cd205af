// tests/net_test.h: the names the gort::net tests (net_test.cc,
// udpsock_test.cc) share: chrono literals, the clock they measure lower
// bounds with, net's types, and the GOMAXPROCS helpers of watchdog.h.
#ifndef GORT_TESTS_NET_TEST_H_
#define GORT_TESTS_NET_TEST_H_

#include <chrono>

#include "gort/gort.h"
#include "watchdog.h"

namespace gort_net_test {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using gort::net::Conn;
using gort::net::Error;
using gort::net::Listener;
using gort::net::PacketConn;
using gort_test::LetOthersPark;
using gort_test::Procs;

}  // namespace gort_net_test

#endif  // GORT_TESTS_NET_TEST_H_
