#!/bin/sh
# cmake/qemu-run.sh QEMU PROGRAM [ARG...]: runs a target program under
# qemu-user (the CMAKE_CROSSCOMPILING_EMULATOR of cmake/toolchains/*.cmake).
#
# Running `QEMU PROGRAM` alone is enough for most programs, but not for one
# that re-executes itself: GoogleTest's "threadsafe" death tests execv(argv[0])
# and the host kernel cannot run a foreign binary (this machine has no
# binfmt_misc registration for qemu, and registering one would change the
# machine for everyone). So PROGRAM runs with argv[0] set (qemu -0) to a
# small host script that starts PROGRAM under QEMU again, passing its
# arguments on; the re-executed child then runs under qemu like its parent.
# The script lives in a private temporary directory removed at exit.
set -u
if [ $# -lt 2 ]; then
  echo "usage: qemu-run.sh QEMU PROGRAM [ARG...]" >&2
  exit 2
fi
qemu=$1
prog=$2
shift 2
case $prog in
  /*) ;;
  *) prog=$PWD/$prog ;;
esac

# quote WORD: WORD as one single-quoted shell word.
quote() {
  printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

dir=$(mktemp -d "${TMPDIR:-/tmp}/gort-qemu.XXXXXX") || exit 1
self=$dir/$(basename "$prog")
{
  echo '#!/bin/sh'
  echo "exec $(quote "$qemu") -0 \"\$0\" $(quote "$prog") \"\$@\""
} >"$self"
chmod +x "$self"

trap 'rm -rf "$dir"' EXIT
"$qemu" -0 "$self" "$prog" "$@"
rc=$?
rm -rf "$dir"
trap - EXIT
# A program killed by a signal: die of the same signal, as it did.
if [ "$rc" -gt 128 ] && [ "$rc" -lt 160 ]; then
  sig=$((rc - 128))
  trap - "$sig" 2>/dev/null
  kill "-$sig" $$
fi
exit "$rc"
