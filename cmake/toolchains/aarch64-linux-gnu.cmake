# CMake toolchain file: 64-bit Arm Linux with Debian's cross compilers.
#
#   apt-get install gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=<kiln>/cmake/toolchains/aarch64-linux-gnu.cmake
#
# Programs built this way run on the x86-64 build machine under qemu-aarch64
# (CMAKE_CROSSCOMPILING_EMULATOR, which ctest and add_custom_command use).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(KILN_CROSS_PREFIX aarch64-linux-gnu- CACHE STRING "prefix of the cross tools")
set(CMAKE_C_COMPILER ${KILN_CROSS_PREFIX}gcc)
set(CMAKE_CXX_COMPILER ${KILN_CROSS_PREFIX}g++)

# Debian's multiarch cross layout: headers and libraries under /usr/aarch64-linux-gnu.
set(KILN_CROSS_SYSROOT /usr/aarch64-linux-gnu CACHE PATH "the target's C library")
set(CMAKE_FIND_ROOT_PATH ${KILN_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

find_program(KILN_QEMU_AARCH64 qemu-aarch64)
if(KILN_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${KILN_QEMU_AARCH64} -L ${KILN_CROSS_SYSROOT})
endif()
