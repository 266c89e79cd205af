#!/usr/bin/env bash
# gort against Go 1.19 on the same benchmarks, side by side in one run:
# builds gort-compare and its Go twin gortbench-go (benchmarks/go, with
# Debian's golang-go) in Release, then runs them in random order within
# each round at GOMAXPROCS 1 to the CPU count, Go both as shipped and with
# 1 ns timer slack, and prints Go benchmark lines and one table per
# GOMAXPROCS (medians, paired ratios against both Go columns, the 95%
# confidence interval of the judged ratio, verdict met/missed/inconclusive).
# TCPPingPong and TCPPingPong100 also run, at GOMAXPROCS 1, the same op in
# plain C (gort-tcp-floor-c, benchmarks/c: one thread, one epoll loop) in the
# same rounds, and are judged against it too (the floor: at most 1.05x).
# Takes about 13 minutes on 2 CPUs: each GOMAXPROCS of the sweep (1 to the
# CPU count) is about 550 measurements of some 0.6 s each (10 rounds of every
# row, each measurement a fresh process growing N to --benchtime), and a row
# still inconclusive gets more rounds, up to 3 x --count. A results file
# (--markdown) records how long its run took.
#
# Extra arguments go to gort-compare, e.g.:
#   scripts/compare.sh --bench='Ping|Gosched' --count=10 --benchtime=1s
#   scripts/compare.sh --markdown --note='...'   # docs/results/compare-<cpu>.md
#   scripts/compare.sh --smoke
# Set GORT_BUILD_DIR to build elsewhere than build/release (it is configured
# with the project's defaults plus -DGORT_BUILD_TESTS=OFF when it is not the
# preset's directory).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
scripts/deps.sh

# gort-compare depends on gortbench_go, the `go build` of benchmarks/go, and
# on gort-tcp-floor-c, the C floor (named here too, for the reader).
release_build gort-compare gort-tcp-floor-c
# Recorded by --markdown as the command that produced the results.
GORT_COMPARE_COMMAND="scripts/compare.sh${1+ $(shell_join "$@")}"
export GORT_COMPARE_COMMAND
exec "$build_dir/benchmarks/gort-compare" "$@"
