# cmake/toolchains/windows-386.cmake: cross compiling gort for windows/386 with
# Debian's mingw-w64 (g++-mingw-w64-i686-posix: the posix thread model, since
# the win32 one has no std::mutex), linked -static so the programs need no
# mingw DLLs, large-address-aware (4 GiB of address space under WoW64 and
# Wine, not 2), and run under Wine (/usr/lib/wine/wine). scripts/windows.sh installs all
# of it, builds GoogleTest for the target, and uses this file; by hand:
#   cmake -S . -B build/windows-386 -G Ninja \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/windows-386.cmake \
#     -DCMAKE_PREFIX_PATH=<GoogleTest built for i686-w64-mingw32>
# Goroutine stacks are Windows fibres (runtime/os/gogo_fiber.cc), so
# Boost.Context is not needed; Abseil is used header-only (thread
# annotations, AnyInvocable) and its headers are taken from the host's
# libabsl-dev through a directory holding only them (adding /usr/include
# itself would bring in glibc's).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR i686)

set(CMAKE_C_COMPILER i686-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER i686-w64-mingw32-g++-posix)
set(CMAKE_ASM_COMPILER i686-w64-mingw32-gcc-posix)
set(CMAKE_RC_COMPILER i686-w64-mingw32-windres)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static -Wl,--large-address-aware")
# Frame pointers kept (GCC omits them on 386 from -O1 on): the CPU profiler
# walks a sampled thread's ebp chain (runtime/os/cpuprof_windows.cc), and a
# function built without one hides its callers from the profile.
set(CMAKE_C_FLAGS_INIT "-fno-omit-frame-pointer")
set(CMAKE_CXX_FLAGS_INIT "-fno-omit-frame-pointer")

set(CMAKE_FIND_ROOT_PATH /usr/i686-w64-mingw32)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# Abseil's headers only, from the host.
set(_gort_absl "${CMAKE_BINARY_DIR}/absl-include")
if(NOT EXISTS "${_gort_absl}/absl")
  file(MAKE_DIRECTORY "${_gort_absl}")
  file(CREATE_LINK /usr/include/absl "${_gort_absl}/absl" SYMBOLIC)
endif()
set(ABSL_INCLUDE_DIR "${_gort_absl}" CACHE PATH "Abseil headers")

# Running target programs (ctest, gtest_discover_tests' listing) under Wine,
# with a Wine prefix inside the build tree.
get_filename_component(_gort_cmake_dir "${CMAKE_CURRENT_LIST_DIR}" DIRECTORY)
set(ENV{GORT_WINEPREFIX} "${CMAKE_BINARY_DIR}/wineprefix")
set(CMAKE_CROSSCOMPILING_EMULATOR
    "/usr/bin/env;GORT_WINEPREFIX=${CMAKE_BINARY_DIR}/wineprefix;/bin/sh;${_gort_cmake_dir}/wine-run.sh;/usr/lib/wine/wine")
