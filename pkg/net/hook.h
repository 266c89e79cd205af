// pkg/net/hook.h: gort::net's test hooks, as Go's net/hook.go. Only tests
// set them (tests link gort-internals and include this header); a program
// never does, so each is one null pointer read on a slow path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gort/net.h"

namespace gort::net::internal {

// readsSkipped: c's reads that parked at once, without the read that would
// have found nothing (gort's own; fdRead's drained hint), for tests.
std::uint64_t readsSkipped(const Conn& c);

// testHookLookupHost mirrors Go's testHookLookupIP (net/hook.go:17): when set,
// it answers every name lookup (numeric hosts aside, "localhost" included) with
// these numeric addresses, in this order, so a test can give Dial a list of
// addresses the machine's resolver and IPv6 support would not.
extern std::vector<std::string> (*testHookLookupHost)(const std::string& host);

}  // namespace gort::net::internal
