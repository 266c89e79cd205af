#!/usr/bin/env bash
# Checks the C++ sources against .clang-format (clang-format 14, Google
# style). Every tracked *.cc and *.h must be formatted, except the files
# listed in scripts/format-todo.txt, which predate the check and are
# formatted when next rewritten; a listed file that is now clean fails the
# check too, so the list only shrinks. Takes a few seconds.
# Usage: scripts/format-check.sh            check
#        scripts/format-check.sh --fix FILE  format FILE in place
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

if [ "${1:-}" = "--fix" ]; then
  shift
  exec clang-format -i "$@"
fi
scripts/deps.sh

todo=scripts/format-todo.txt
bad=0
while IFS= read -r f; do
  if grep -qxF "$f" "$todo"; then
    if clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
      echo "format-check: $f is formatted now: remove it from $todo"
      bad=1
    fi
  elif ! clang-format --dry-run --Werror "$f" 2>/dev/null; then
    echo "format-check: $f is not formatted (scripts/format-check.sh --fix $f)"
    bad=1
  fi
done < <(git ls-files '*.cc' '*.h')
while IFS= read -r f; do
  case $f in ''|'#'*) continue ;; esac
  [ -f "$f" ] || { echo "format-check: $todo lists $f, which is gone"; bad=1; }
done <"$todo"
[ $bad -eq 0 ] && echo "format-check: PASS"
exit $bad
