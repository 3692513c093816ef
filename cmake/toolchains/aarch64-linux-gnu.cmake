# CMake toolchain file: 64-bit Arm Linux with Debian's cross gcc
# (apt-get install gcc-aarch64-linux-gnu; qemu-user to run the programs).
#
#   cmake -S samples/mlp -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=$(python -m ireegen --cmake-dir)/toolchains/aarch64-linux-gnu.cmake \
#         -Direegen_DIR=$(python -m ireegen --cmake-dir) -DEXECUTION_MODEL=runtimeless
#
# ireegen_add_model() then defaults the executables' target triple to
# aarch64-unknown-linux-gnu (from CMAKE_SYSTEM_PROCESSOR).  Another compiler
# prefix: -DIREEGEN_CROSS_PREFIX=... (default aarch64-linux-gnu-).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(IREEGEN_CROSS_PREFIX "aarch64-linux-gnu-" CACHE STRING "prefix of the cross compiler's programs")
set(CMAKE_C_COMPILER "${IREEGEN_CROSS_PREFIX}gcc")
set(CMAKE_CXX_COMPILER "${IREEGEN_CROSS_PREFIX}g++")

# Debian installs the target's libraries and headers here.
set(IREEGEN_CROSS_SYSROOT "/usr/aarch64-linux-gnu" CACHE PATH "the target's library root")
set(CMAKE_FIND_ROOT_PATH "${IREEGEN_CROSS_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# Packages: the target's, and those given by <Package>_DIR (ireegen's CMake
# files and an IREE runtime built for aarch64).
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# Lets ctest and add_custom_command run target programs under qemu-user.
find_program(IREEGEN_QEMU qemu-aarch64)
if(IREEGEN_QEMU)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${IREEGEN_QEMU};-L;${IREEGEN_CROSS_SYSROOT}")
endif()
