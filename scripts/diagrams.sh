#!/usr/bin/env bash
# Renders docs/diagrams/*.dot (Graphviz sources, the text the diagrams are
# made from) to the SVGs committed beside them and used by docs/. Run after
# editing a .dot file; installs Debian's graphviz if it is missing. Then
# draws one ChanToSyscallPing round trip from a fresh trace
# (docs/images/ping-roundtrip.svg, tools/trace/zoom_svg.py; builds
# gort-compare).
# tools/check_diagrams.py (ctest diagrams) checks the names they show.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
scripts/deps.sh graphviz fonts-dejavu-core
for src in docs/diagrams/*.dot; do
  dot -Tsvg "$src" -o "${src%.dot}.svg"
  echo "wrote ${src%.dot}.svg"
done

preset_build default gort-compare
trace=$(mktemp --suffix=.json)
trap 'rm -f "$trace"' EXIT
GORT_TRACE=$trace GORT_TRACE_FORMAT=json build/default/benchmarks/gort-compare --ping \
  --bench='^ChanToSyscallPing$' --benchtime=200x --count=1 --usleep=highres \
  >/dev/null
python3 tools/trace/zoom_svg.py "$trace" docs/images/ping-roundtrip.svg
