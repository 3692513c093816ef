# Cortex-M4 with arm-none-eabi-gcc: arm-none-eabi.cmake with its core set.
set(IREEGEN_CORTEX_M_CPU cortex-m4 CACHE STRING "Cortex-M core")
include("${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake")
