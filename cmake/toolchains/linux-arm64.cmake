# cmake/toolchains/linux-arm64.cmake: cross compiling gort for linux/arm64
# (AArch64, AAPCS64) with Debian's cross toolchain (crossbuild-essential-arm64)
# and the target's libraries from Debian multiarch (libboost-context-dev:arm64,
# libabsl-dev:arm64, libgtest-dev:arm64); programs and tests run under qemu-
# aarch64-static (qemu-user-static). scripts/cross.sh installs all of it and
# uses this file; by hand:
#   cmake -S . -B build/cross-arm64 -G Ninja \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/linux-arm64.cmake
set(CMAKE_SYSTEM_NAME Linux)
# What runtime/CMakeLists.txt selects the trampolines by (Debian's GNU CPU name).
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# The .S trampolines go through the C compiler driver (preprocessor, then as).
set(CMAKE_ASM_COMPILER aarch64-linux-gnu-gcc)

# Multiarch: the target's libraries and CMake package files live in
# /usr/lib/aarch64-linux-gnu (BoostConfig, GTestConfig), its headers in /usr/include
# beside the host's (Multi-Arch: same packages ship identical headers for every
# architecture). Naming the library architecture makes find_package() and
# find_library() search <prefix>/lib/aarch64-linux-gnu, and no other multiarch
# directory, so the host's x86_64 libraries and configs are never picked; the
# cross linker already searches the target's multiarch directories by itself.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Programs (ninja, clang, the host's tools) are the host's.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)

# Running target programs (ctest, gtest_discover_tests' listing, try_run)
# under qemu-user: the multiarch C library and dynamic loader are installed at
# their usual paths, so qemu needs no -L sysroot. cmake/qemu-run.sh lets a
# program re-execute itself under qemu too (GoogleTest's death tests).
find_program(GORT_QEMU NAMES qemu-aarch64-static qemu-aarch64 REQUIRED)
get_filename_component(_gort_cmake_dir "${CMAKE_CURRENT_LIST_DIR}" DIRECTORY)
set(CMAKE_CROSSCOMPILING_EMULATOR
    "/bin/sh;${_gort_cmake_dir}/qemu-run.sh;${GORT_QEMU}")
