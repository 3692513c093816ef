# CMake toolchain file: bare-metal Cortex-M with Debian's arm-none-eabi-gcc
# and newlib (apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi).
#   cmake -S . -B build --toolchain <ireegen cmake dir>/toolchains/arm-none-eabi.cmake \
#         -DIREEGEN_CORTEX_M_CPU=cortex-m55
# IREEGEN_CORTEX_M_CPU (default cortex-m4) picks the gcc flags and the float
# ABI; ireegen_add_model() takes the same triple and CPU for the model's
# executables (IREEGEN_TARGET_TRIPLE, IREEGEN_TARGET_CPU), so that the objects
# link.  The table mirrors ireegen/config/cores.py (a test keeps them equal).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
# Test programs cannot link without a startup and a linker script.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(IREEGEN_CORTEX_M_CPU cortex-m4 CACHE STRING "Cortex-M core: cortex-m0, cortex-m0plus, cortex-m3, cortex-m4, cortex-m7, cortex-m33, cortex-m55")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES IREEGEN_CORTEX_M_CPU)

# core -> LLVM architecture, gcc -mfpu (none: no FPU, soft float)
set(_ireegen_cortex_m_cortex-m0 thumbv6m none)
set(_ireegen_cortex_m_cortex-m0plus thumbv6m none)
set(_ireegen_cortex_m_cortex-m3 thumbv7m none)
set(_ireegen_cortex_m_cortex-m4 thumbv7em fpv4-sp-d16)
set(_ireegen_cortex_m_cortex-m7 thumbv7em fpv5-d16)
set(_ireegen_cortex_m_cortex-m33 thumbv8m.main fpv5-sp-d16)
set(_ireegen_cortex_m_cortex-m55 thumbv8.1m.main auto)
if(NOT DEFINED _ireegen_cortex_m_${IREEGEN_CORTEX_M_CPU})
  message(FATAL_ERROR "IREEGEN_CORTEX_M_CPU=${IREEGEN_CORTEX_M_CPU}: not a core this toolchain file knows; "
    "choose cortex-m0, cortex-m0plus, cortex-m3, cortex-m4, cortex-m7, cortex-m33 or cortex-m55")
endif()
list(GET _ireegen_cortex_m_${IREEGEN_CORTEX_M_CPU} 0 _ireegen_arch)
list(GET _ireegen_cortex_m_${IREEGEN_CORTEX_M_CPU} 1 _ireegen_fpu)
set(_ireegen_flags "-mcpu=${IREEGEN_CORTEX_M_CPU} -mthumb")
if(NOT _ireegen_fpu STREQUAL "none")
  string(APPEND _ireegen_flags " -mfloat-abi=hard -mfpu=${_ireegen_fpu}")
  set(IREEGEN_TARGET_TRIPLE "${_ireegen_arch}-none-eabihf")
else()
  string(APPEND _ireegen_flags " -mfloat-abi=soft")
  set(IREEGEN_TARGET_TRIPLE "${_ireegen_arch}-none-eabi")
endif()
set(IREEGEN_TARGET_CPU "${IREEGEN_CORTEX_M_CPU}")
set(IREEGEN_CORTEX_M_FLAGS "${_ireegen_flags}")

set(CMAKE_C_FLAGS_INIT "${_ireegen_flags} -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${_ireegen_flags} -ffunction-sections -fdata-sections")
set(CMAKE_ASM_FLAGS_INIT "${_ireegen_flags}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--gc-sections")

