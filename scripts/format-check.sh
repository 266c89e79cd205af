#!/usr/bin/env bash
# Checks the C++ sources against .clang-format (clang-format 14, Google
# style): every tracked *.cc and *.h must be formatted, with no exemptions,
# so an editor that formats on save never breaks CI. Takes a few seconds
# (forty files per clang-format, two at a time).
# Usage: scripts/format-check.sh            check
#        scripts/format-check.sh --fix [FILE...]  format the files in place
#                                           (default: every tracked file)
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

if [ "${1:-}" = "--fix" ]; then
  shift
  if [ $# -eq 0 ]; then
    git ls-files -z '*.cc' '*.h' | xargs -0 clang-format -i
    exit 0
  fi
  exec clang-format -i "$@"
fi
scripts/deps.sh

# Forty files per clang-format, two at a time; each file it would change
# is named in its "code should be clang-formatted" errors.
bad=0
errors=$(git ls-files -z '*.cc' '*.h' |
  xargs -0 -n 40 -P 2 clang-format --dry-run --Werror 2>&1 >/dev/null) || bad=1
if [ $bad -ne 0 ]; then
  files=$(printf '%s\n' "$errors" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: .*/\1/p' | sort -u)
  [ -n "$files" ] || printf '%s\n' "$errors" | head -20
  for f in $files; do
    echo "format-check: $f is not formatted (scripts/format-check.sh --fix $f)"
  done
fi
[ $bad -eq 0 ] && echo "format-check: PASS"
exit $bad
