#!/usr/bin/env bash
# The main job: builds gort in Release and runs what the project is about:
# the usleep probe and Go's ping benchmarks with usleep in low-resolution
# ("old", Go's behaviour) and high-resolution ("new") mode side by side:
# gort-compare --ping, each measurement in a fresh process, the modes in
# random order within each round, then a benchstat table (medians, 95%
# confidence intervals, the change where a Mann-Whitney U test finds one).
# Extra arguments go to gort-compare (e.g. --count=5 --benchtime=0.2s).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
scripts/deps.sh
preset_build release gort-usleep-probe gort-compare
echo "== gort-usleep-probe =="
build/release/tools/gort-usleep-probe
echo
echo "== gort-compare --ping (GOMAXPROCS 1; base = lowres, new = highres) =="
build/release/benchmarks/gort-compare --ping --benchtime=500ms "$@"
