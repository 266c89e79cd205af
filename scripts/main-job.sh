#!/usr/bin/env bash
# The main job: builds gort in Release and runs what the project is about:
# the usleep probe and Go's ping benchmarks with usleep in low-resolution
# ("old", Go's behaviour) and high-resolution ("new") mode side by side.
# Extra arguments go to gort-ping (e.g. --count=5 --benchtime=0.5s).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
scripts/deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target gort-usleep-probe gort-ping
echo "== gort-usleep-probe =="
build/release/tools/gort-usleep-probe
echo
echo "== gort-ping (maxprocs 1; old = kLowRes, new = kHighRes) =="
build/release/benchmarks/gort-ping "$@"
