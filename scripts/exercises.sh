#!/usr/bin/env bash
# scripts/exercises.sh: runs every exercise's commands in docs/exercises.md,
# so none goes stale. An exercise's commands are the ```sh block after a
# line `<!-- exercise: NAME -->`; each `<!-- expect: REGEX -->` line after
# the block is an extended regular expression its output must match. Blocks
# run from the repository root with bash -eo pipefail, after a default
# build (scripts/test.sh builds first). Mutant runs are only checked for
# names (GORT_MUTANTS_DRY=1), so the whole check takes seconds.
#
# Usage: scripts/exercises.sh [NAME...]   (default: every exercise)
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
doc=${GORT_EXERCISES_DOC:-docs/exercises.md}  # (another file: to test this script)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Split the document into $out/NAME.sh and $out/NAME.expect.
awk -v dir="$out" '
  /^<!-- exercise: [a-z0-9-]+ -->$/ { name = $3; inblock = 0; next }
  name != "" && /^```sh$/ { inblock = 1; next }
  inblock && /^```$/ { inblock = 0; done = name; next }
  inblock { print > (dir "/" name ".sh"); next }
  done != "" && /^<!-- expect: .* -->$/ {
    sub(/^<!-- expect: /, ""); sub(/ -->$/, ""); print > (dir "/" done ".expect")
  }
' "$doc"

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in "$out"/*.sh; do names+=("$(basename "$f" .sh)"); done
fi
[ ${#names[@]} -gt 0 ] || {
  say "no exercises found in $doc"
  exit 1
}
failed=0
for name in "${names[@]}"; do
  [ -f "$out/$name.sh" ] || {
    say "no exercise $name in $doc"
    exit 2
  }
  started=$(now)
  if ! GORT_MUTANTS_DRY=1 timeout 60 bash -eo pipefail "$out/$name.sh" \
    >"$out/$name.out" 2>&1; then
    say "exercise $name: the commands failed"
    tail -20 "$out/$name.out"
    failed=1
    continue
  fi
  if [ -f "$out/$name.expect" ]; then
    while IFS= read -r re; do
      grep -Eq -- "$re" "$out/$name.out" || {
        say "exercise $name: the output lacks /$re/"
        tail -20 "$out/$name.out"
        failed=1
      }
    done <"$out/$name.expect"
  fi
  say "exercise $name: ok ($(elapsed "$started"))"
done
exit $failed
