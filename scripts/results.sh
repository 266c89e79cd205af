# scripts/results.sh: where the scripts that measure write what they found.
# Sourced after lib.sh, never run:   . "$(dirname "$0")/results.sh"
#
# Every tool that measures writes a generated file of its own under
# docs/results/, named by topic and CPU model, and rewrites it whole on each
# run: docs/results/<topic>-<cpu-slug>.md. No tool edits a page of docs/
# (those link to the files; docs/performance.md carries a copy of the
# compare files that scripts/docs-check.sh keeps identical).
#
#   cpu_model           /proc/cpuinfo's model name ("" if it has none)
#   cpu_slug            that name as a file name: lower case, each run of
#                       other characters one '-' ("AMD EPYC" -> amd-epyc;
#                       "unknown-cpu" without one). gort-compare's CpuSlug
#                       (benchmarks/compare_report.cc) spells it the same.
#   results_file TOPIC  docs/results/TOPIC-<cpu-slug>.md
#   results_commit      HEAD's short hash, "+dirty" if tracked files differ
# shellcheck shell=bash

cpu_model() {
  grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | sed 's/^[^:]*:[[:space:]]*//'
}

cpu_slug() {
  local s
  # shellcheck disable=SC2018,SC2019 # ASCII only, as CpuSlug
  s=$(cpu_model | LC_ALL=C tr 'A-Z' 'a-z' | LC_ALL=C sed -E 's/[^a-z0-9]+/-/g; s/^-+//; s/-+$//')
  printf '%s\n' "${s:-unknown-cpu}"
}

results_file() {
  printf 'docs/results/%s-%s.md\n' "$1" "$(cpu_slug)"
}

results_commit() {
  local c
  c=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
  git diff --quiet HEAD -- . 2>/dev/null || c+="+dirty"
  printf '%s\n' "$c"
}
