# ireegen CMake package: find_package(ireegen CONFIG) then ireegen_add_model().
#
# Finds the Python interpreter that has ireegen (override with
# -DIREEGEN_PYTHON_EXECUTABLE=...), and defines:
#
#   ireegen_add_model(<target> SRC <model>
#                     [NAME <c-prefix>]
#                     [EXECUTION_MODEL async|inline-static|inline-dynamic|runtimeless]
#                     [EXECUTABLE_FORMAT embedded-elf|static-library|vmvx]
#                     [MODULE_FORMAT vmfb|emitc]
#                     [DATA_FORMAT asm|c]
#                     [TARGET_TRIPLE <triple>] [TARGET_CPU <cpu>]
#                     [TARGET_CPU_FEATURES <features>]
#                     [FLAGS <iree-compile flag>...]
#                     [INPUT_SHAPES <onnx input>=<dims>...]
#                     [INPUT_VALUES <onnx input>=<v>[,<v>...]...]
#                     [VERIFY ON|OFF|STRICT] [VERIFY_INPUTS <x.npz>]
#                     [KERNELS <spec.json>]
#                     [OUTPUT_DIR <dir>] [GENERATE_ONLY] [NO_BUILTIN_KERNELS]
#                     [QUANTIZED_IO] [PARALLEL_FOR]
#                     [CONSTANTS_SECTION <section>] [ARENA_SECTION <section>]
#                     [OPTIMIZE_FOR speed|size] [TUNE off|quick|full]
#                     [THREADS n] [MAX_DETECTIONS n])
#
# SRC is .mlir, .mlirbc, .onnx or .tflite (an ONNX model's external data files are
# dependencies too; INPUT_SHAPES pins its symbolic dimensions, e.g.
# image=1x1x28x28; INPUT_VALUES makes inputs constants, e.g. sr=16000).
#
# EXECUTION_MODEL defaults to async, as in the CLI; async and the inline
# modes link IREE's runtime: a prebuilt SDK (find_package(IREERuntime),
# -DIREERuntime_DIR), else built in the build tree with FetchContent
# (ireegenRuntime.cmake, docs/iree-runtime.md); runtimeless needs only a C
# compiler.
#
# It runs `python -m ireegen emit` at build time and creates the static
# library <target> with the generated sources, its include directory PUBLIC
# and the IREE runtime targets of the chosen mode linked.  With GENERATE_ONLY,
# <target> is just the generation step (a custom target; the sources, objects
# and runtime targets it would use are in its IREEGEN_* properties).
# Runtimeless firmware: CONSTANTS_SECTION / ARENA_SECTION put the weights and
# the default arena in those linker sections; TARGET_TRIPLE and TARGET_CPU
# default to the toolchain's (cmake/toolchains/arm-none-eabi.cmake sets
# IREEGEN_TARGET_TRIPLE and IREEGEN_TARGET_CPU); -DIREEGEN_PRINT_FOOTPRINT=ON
# prints each model's flash and RAM after it builds (`ireegen size`).
# DATA_FORMAT: the weights / module bytes as a .S that .incbin's a binary
# file (asm; the default for gcc/clang-like compilers; enables the ASM
# language) or as a C array (c; the default for other compilers, e.g. MSVC).
# See docs/weights.md.
include_guard(GLOBAL)
cmake_minimum_required(VERSION 3.21)

set(_IREEGEN_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")

# The interpreter whose `ireegen` package is the one this file belongs to,
# with the packages ireegen needs (one that sees ireegen only through
# PYTHONPATH may lack them).
function(_ireegen_python_matches python out_var)
  execute_process(
    COMMAND "${python}" -c "import jinja2, numpy, ireegen.common.resources as r; print(r.cmake_dir())"
    # Not the caller's directory: a folder named ireegen there would shadow the package.
    WORKING_DIRECTORY "${_IREEGEN_CMAKE_DIR}"
    OUTPUT_VARIABLE _dir ERROR_QUIET RESULT_VARIABLE _rc
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(${out_var} FALSE PARENT_SCOPE)
  if(_rc EQUAL 0)
    file(REAL_PATH "${_dir}" _dir)
    file(REAL_PATH "${_IREEGEN_CMAKE_DIR}" _mine)
    if(_dir STREQUAL _mine)
      set(${out_var} TRUE PARENT_SCOPE)
    endif()
  endif()
endfunction()

if(NOT IREEGEN_PYTHON_EXECUTABLE)
  set(_ireegen_candidates "")
  # An installed package lives in <prefix>/lib/pythonX.Y/site-packages/ireegen/cmake.
  get_filename_component(_ireegen_prefix "${_IREEGEN_CMAKE_DIR}/../../../../.." ABSOLUTE)
  file(GLOB _ireegen_bins "${_ireegen_prefix}/bin/python3*" "${_ireegen_prefix}/Scripts/python.exe")
  list(APPEND _ireegen_candidates ${_ireegen_bins})
  if(Python3_EXECUTABLE)
    list(APPEND _ireegen_candidates "${Python3_EXECUTABLE}")
  endif()
  find_program(_ireegen_path_python NAMES python3 python NO_CACHE)
  if(_ireegen_path_python)
    list(APPEND _ireegen_candidates "${_ireegen_path_python}")
  endif()
  foreach(_candidate IN LISTS _ireegen_candidates)
    _ireegen_python_matches("${_candidate}" _ok)
    if(_ok)
      set(IREEGEN_PYTHON_EXECUTABLE "${_candidate}" CACHE FILEPATH "Python interpreter that has ireegen")
      break()
    endif()
  endforeach()
  if(NOT IREEGEN_PYTHON_EXECUTABLE)
    message(FATAL_ERROR
      "ireegen: found no Python interpreter with this ireegen package "
      "(${_IREEGEN_CMAKE_DIR}); set -DIREEGEN_PYTHON_EXECUTABLE=/path/to/python")
  endif()
endif()

include("${CMAKE_CURRENT_LIST_DIR}/ireegenAddModel.cmake")
