#!/bin/sh
# cmake/wine-run.sh WINE PROGRAM [ARG...]: runs a Windows program under Wine
# (the CMAKE_CROSSCOMPILING_EMULATOR of cmake/toolchains/windows-*.cmake).
# The Wine prefix is private to the build tree (GORT_WINEPREFIX, set by the
# toolchain file) and Wine's debug channels are off, so a test's stderr is
# the program's own. scripts/windows.sh starts the prefix's wineserver
# persistently and boots the prefix once before ctest; without that, each
# program waits a few seconds for Wine's services to let go of its output.
set -u
if [ $# -lt 2 ]; then
  echo "usage: wine-run.sh WINE PROGRAM [ARG...]" >&2
  exit 2
fi
wine=$1
shift
export WINEPREFIX="${GORT_WINEPREFIX:?GORT_WINEPREFIX is not set}"
export WINEDEBUG=-all
export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:-mscoree,mshtml=}"
exec "$wine" "$@"
