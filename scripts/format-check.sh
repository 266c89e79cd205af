#!/usr/bin/env bash
# Checks the C++ sources against .clang-format (clang-format 14, Google
# style): every tracked *.cc and *.h must be formatted, with no exemptions,
# so an editor that formats on save never breaks CI. Takes a few seconds.
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

bad=0
while IFS= read -r f; do
  if ! clang-format --dry-run --Werror "$f" 2>/dev/null; then
    echo "format-check: $f is not formatted (scripts/format-check.sh --fix $f)"
    bad=1
  fi
done < <(git ls-files '*.cc' '*.h')
[ $bad -eq 0 ] && echo "format-check: PASS"
exit $bad
