// gort/gort.h: everything gort offers: goroutines, channels, select, timers
// and tickers, contexts, WaitGroup, Mutex, RWMutex, Cond and Once, on a port
// of Go's G/M/P scheduler.
#ifndef GORT_GORT_H_
#define GORT_GORT_H_

#include "gort/chan.h"
#include "gort/context.h"
#include "gort/defer.h"
#include "gort/errgroup.h"
#include "gort/net.h"
#include "gort/poll.h"
#include "gort/pprof.h"
#include "gort/runtime.h"
#include "gort/select.h"
#include "gort/sync.h"
#include "gort/time.h"
#include "gort/trace.h"

#endif  // GORT_GORT_H_
