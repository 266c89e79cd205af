// gort/time.h: timer channels (Go's time.After).
#ifndef GORT_TIME_H_
#define GORT_TIME_H_

#include <chrono>
#include <cstdint>

#include "gort/chan.h"

namespace gort {

// A channel of capacity 1 that receives Nanotime() once d has passed, even
// if nobody is receiving yet (time.After).
Chan<std::int64_t> After(std::chrono::nanoseconds d);

}  // namespace gort

#endif  // GORT_TIME_H_
