# cmake/gort_ccache.cmake: every compilation through ccache, when it is
# installed and GORT_CCACHE is on (the default when gort is the top-level
# project), for every configuration:
# native, the cross and mingw toolchains, the sanitizers, the package test.
#
# Clones share the cache: ccache rewrites the paths under the checkout
# (CCACHE_BASEDIR) to relative ones before hashing, and leaves the build
# directory out of the hash (CCACHE_NOHASHDIR; -g would put it there), so a
# clean clone in another folder hits the entries an earlier build left. The
# compiler then sees paths relative to the build directory (__FILE__ reads
# ../../tests/x.cc), and an object taken from another clone's build keeps
# that clone's compilation directory in its debug information, which
# debuggers and the goroutine dump's file names (libdw) read.
# A launcher given on the command line (scripts/mutants.sh sets its own
# base directory per worker) is kept.
option(GORT_CCACHE "Compile through ccache when it is installed" ${PROJECT_IS_TOP_LEVEL})
if(GORT_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(GORT_CCACHE_PROGRAM ccache)
  if(GORT_CCACHE_PROGRAM)
    set(_gort_launcher ${CMAKE_COMMAND} -E env
      CCACHE_BASEDIR=${CMAKE_SOURCE_DIR} CCACHE_NOHASHDIR=true
      ${GORT_CCACHE_PROGRAM})
    set(CMAKE_C_COMPILER_LAUNCHER ${_gort_launcher})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${_gort_launcher})
    message(STATUS "gort: compiling through ${GORT_CCACHE_PROGRAM}")
  endif()
endif()
