#!/usr/bin/env bash
# scripts/docs-check.sh: the documentation's rules (tools/check_docs.py has
# them in full). Fails on
#   - README.md over 120 lines, or a page under docs/ over 500 (the notebook
#     docs/notes/ included; the generated docs/results/ files are not pages);
#   - a word of the development process in any tracked file (the words
#     are listed in tools/check_docs.py; the dated notebook docs/notes/ may
#     say when, the rest of the tree may not);
#   - a relative link of README.md or docs/ that names no file or heading;
#   - docs/performance.md's copy of docs/results/compare-*.md differing from
#     those files.
# Takes a second; needs only python3 and git.
#
# Usage: scripts/docs-check.sh           check
#        scripts/docs-check.sh --sync    first copy docs/results/compare-*.md
#                                        into docs/performance.md, then check
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
exec python3 tools/check_docs.py "$@" "$root"
