# cmake/gort_build.cmake: what every gort target is built with, in one place.
#   gort_target_names(): GORT_GOOS and GORT_GOARCH for the target being built,
#     named as Go's GOOS and GOARCH are (linux/windows; amd64/386/arm/arm64).
#   gort_set_warnings(target): gort's warning flags on one target.
#   GORT_LINE_TABLES: the debug-info level of everything but the library.
#   gort_gtest_discover(target ...): gtest_discover_tests, the binary noted.
# Included by the top-level CMakeLists.txt, so runtime/, tests/, benchmarks/
# and tools/ all see the same names and flags.

# gort_goarch(out processor): Go's GOARCH for a CMake/uname processor name
# (CMAKE_SYSTEM_PROCESSOR: uname -m natively, whatever the toolchain file
# says when cross compiling); empty when Go has no such architecture here.
function(gort_goarch out processor)
  string(TOLOWER "${processor}" _proc)
  set(_arch "")
  if(_proc MATCHES "^(x86_64|amd64)$")
    set(_arch amd64)
  elseif(_proc MATCHES "^(i[3-6]86|x86)$")
    set(_arch 386)
  elseif(_proc MATCHES "^(arm|armhf|armv7.*)$")
    set(_arch arm)
  elseif(_proc MATCHES "^(aarch64|arm64)$")
    set(_arch arm64)
  endif()
  set(${out} "${_arch}" PARENT_SCOPE)
endfunction()

# gort_target_names(): sets GORT_GOOS and GORT_GOARCH in the caller's scope,
# or stops with an error for a target gort does not support (docs/targets.md
# has the matrix; cmake/toolchains/*.cmake the cross targets).
function(gort_target_names)
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    set(_goos linux)
  elseif(CMAKE_SYSTEM_NAME STREQUAL "Windows")
    set(_goos windows)
  else()
    message(FATAL_ERROR "gort: unsupported OS ${CMAKE_SYSTEM_NAME}")
  endif()
  gort_goarch(_goarch "${CMAKE_SYSTEM_PROCESSOR}")
  if(_goarch STREQUAL "")
    message(FATAL_ERROR "gort: unsupported architecture ${CMAKE_SYSTEM_PROCESSOR}")
  endif()
  if(NOT CMAKE_SIZEOF_VOID_P EQUAL 8 AND _goarch MATCHES "^(amd64|arm64)$")
    message(FATAL_ERROR "gort: ${CMAKE_SYSTEM_PROCESSOR} with "
      "${CMAKE_SIZEOF_VOID_P}-byte pointers (-m32, x32 or ILP32) is not "
      "supported; for 32-bit x86 use cmake/toolchains/linux-386.cmake")
  endif()
  set(GORT_GOOS ${_goos} PARENT_SCOPE)
  set(GORT_GOARCH ${_goarch} PARENT_SCOPE)
endfunction()

# gort_set_warnings(target): -Wall -Wextra on the target's C++ sources
# (unused parameters allowed: many mirror Go signatures), and clang's
# thread-safety analysis where the compiler is clang (tests turn its
# analysis back off, tests/CMakeLists.txt says why).
function(gort_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:Clang>>:-Wthread-safety>)
endfunction()

# GORT_LINE_TABLES: compile options for the tests, benchmarks, tools and
# examples (tests/, benchmarks/, tools/ and examples/ add it to all their
# targets): -g1, line tables and function names, in every build type but
# Debug, whatever -g the build type gives the library. That is what they
# need: a goroutine dump or trace shows their frames with file:line
# (traceback_test checks it). Full -g took twice as long on select_test.cc
# (28 s with -O2 -g, 14 s with -O2 -g1) and half again on all the tests'
# objects (652 against 421 CPU-seconds), and CI builds them in nine presets.
set(GORT_LINE_TABLES
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU,Clang>,$<NOT:$<CONFIG:Debug>>>:-g1>)

# GORT_TEST_OPT: the optimization of the test programs' own code (tests/
# adds it to all its targets): -O1 in RelWithDebInfo and Release (the
# mutants' build), where the build type gives -O2 or -O3. The library the
# tests link keeps the build type's level; what -O1 changes is the tests'
# bodies and the public headers' templates inlined into them. -O2 took
# twice as long on chan_test.cc (11.2 s against 5.5 s at -g1), and the
# tests' objects were about half of a build's CPU-seconds, in each of CI's
# nine presets. Benchmarks, tools and examples
# keep the build type's optimization: they are measured.
set(GORT_TEST_OPT
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU,Clang>,$<CONFIG:RelWithDebInfo,Release>>:-O1>)

# gort_gtest_discover(target ARGS...): gtest_discover_tests(target ARGS...),
# every test named "target.Suite.Test", and the binary noted for the tree's
# test-binaries.txt (its name, file and working directory; written by the
# top-level CMakeLists.txt), from which scripts/lib.sh's run_binaries runs
# each test binary whole under qemu or Wine. Every GoogleTest binary
# registers this way.
function(gort_gtest_discover target)
  gtest_discover_tests(${target} TEST_PREFIX "${target}." ${ARGN})
  set_property(GLOBAL APPEND PROPERTY GORT_TEST_BINARIES
    "${target}\t$<TARGET_FILE:${target}>\t${CMAKE_CURRENT_BINARY_DIR}")
endfunction()
