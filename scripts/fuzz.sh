#!/usr/bin/env bash
# Builds the libFuzzer harness tests/fuzz/chan_fuzz (preset fuzz: clang,
# ASan + UBSan, LeakSanitizer at exit), replays the checked-in corpus as a
# regression test, then fuzzes for a bounded time from that corpus.
# Usage: scripts/fuzz.sh            (GORT_FUZZ_SECONDS=60 by default)
#        GORT_FUZZ_SECONDS=600 scripts/fuzz.sh   for a longer run
# New inputs found go to build/fuzz/corpus-new (not into the checked-in
# corpus); a crash leaves its input in build/fuzz/ as crash-*/timeout-*.
# To refresh the corpus: build/fuzz/tests/fuzz/chan_fuzz -merge=1
#   tests/fuzz/corpus build/fuzz/corpus-new
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
scripts/deps.sh libclang-rt-14-dev   # libFuzzer and the sanitizer runtimes
seconds=${GORT_FUZZ_SECONDS:-60}

echo "== fuzz: build =="
preset_build fuzz
bin=build/fuzz/tests/fuzz/chan_fuzz

export ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# A gort fatal error (deadlock, escaped panic) aborts, so libFuzzer keeps
# the input, instead of a quiet exit status 2.
export GOTRACEBACK=crash
# -timeout: an input is one small Run (milliseconds); 20 s means a hang.
common=(-timeout=20 -rss_limit_mb=4096 -print_final_stats=1)

echo "== fuzz: corpus regression ($(ls tests/fuzz/corpus | wc -l) inputs) =="
"$bin" "${common[@]}" tests/fuzz/corpus/*

echo "== fuzz: ${seconds} s =="
rm -rf build/fuzz/corpus-new
mkdir -p build/fuzz/corpus-new
cd build/fuzz
"../../$bin" "${common[@]}" -max_total_time="$seconds" -max_len=256 \
  corpus-new ../../tests/fuzz/corpus
