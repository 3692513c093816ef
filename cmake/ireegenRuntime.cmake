# The IREE runtime the VM execution models link (docs/iree-runtime.md).
#
# _ireegen_require_runtime(<target> <mode text> <runtime targets>) is called
# once per model that links the runtime.  The runtime comes from, in order:
#   1. targets already in the build (IREE added by the project itself),
#   2. find_package(IREERuntime CONFIG): a prebuilt SDK (-DIREERuntime_DIR);
#      every target the model needs must be in it, or configure stops,
#   3. FetchContent: IREE's sources (the release tag of the installed
#      iree-base-compiler, FETCHCONTENT_SOURCE_DIR_IREE, or
#      IREEGEN_IREE_SOURCE_URL with IREEGEN_IREE_SOURCE_SHA256) built as a
#      subproject of this build tree, once, at the first model that needs
#      it; the build compiles only the runtime targets the models link.
# Every failure is one FATAL_ERROR line that says what to do.
include_guard(GLOBAL)

set(IREEGEN_IREE_SOURCE_URL "" CACHE STRING
  "URL of an IREE source archive to build the runtime from (a mirror, or file:// for an air-gapped build)")
set(IREEGEN_IREE_SOURCE_SHA256 "" CACHE STRING "SHA256 of IREEGEN_IREE_SOURCE_URL's archive")
option(IREEGEN_IREE_NO_DOWNLOAD
  "Never download IREE's sources: use IREERuntime_DIR, FETCHCONTENT_SOURCE_DIR_IREE or a file:// IREEGEN_IREE_SOURCE_URL" OFF)

set(_IREEGEN_IREE_GIT_REPOSITORY "https://github.com/iree-org/iree.git")
# The only submodule of IREE's that a runtime build with the options below reads.
set(_IREEGEN_IREE_GIT_SUBMODULES third_party/flatcc)
# How FetchContent_MakeAvailable adds IREE: only what the models link is
# built, and IREE's headers warn nothing in the project's -Werror
# (FetchContent_Declare takes EXCLUDE_FROM_ALL from CMake 3.28).
set(_IREEGEN_IREE_SUBPROJECT "")
if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.28)
  set(_IREEGEN_IREE_SUBPROJECT EXCLUDE_FROM_ALL SYSTEM)
endif()
# IREE's oldest supported CMake (its cmake_minimum_required).
set(_IREEGEN_IREE_MIN_CMAKE 3.26)

# IREE's options for a runtime-only build: no compiler, tests, benchmarks,
# samples or bindings; no libbacktrace (it clones from the network at
# configure time); every HAL driver, executable loader and plugin off but
# those of the table below, which a model may link.
set(_IREEGEN_IREE_OPTIONS
  IREE_BUILD_COMPILER OFF
  IREE_BUILD_TESTS OFF
  IREE_BUILD_BENCHMARKS OFF
  IREE_BUILD_SAMPLES OFF
  IREE_BUILD_DOCS OFF
  IREE_BUILD_PYTHON_BINDINGS OFF
  IREE_BUILD_BINDINGS_TFLITE OFF
  IREE_BUILD_BINDINGS_TFLITE_JAVA OFF
  IREE_ENABLE_LIBBACKTRACE OFF
  IREE_HAL_DRIVER_VULKAN OFF
  IREE_HAL_DRIVER_DEFAULTS OFF
  IREE_HAL_EXECUTABLE_LOADER_DEFAULTS OFF
  IREE_HAL_EXECUTABLE_PLUGIN_DEFAULTS OFF)

# Runtime targets that exist only when an IREE option is on: pairs of a
# target (from the models' RUNTIME_TARGETS) and that option, which the
# build here turns on and the error names when a runtime lacks the target.
set(_IREEGEN_IREE_TARGET_OPTIONS
  iree_hal_drivers_local_sync_sync_driver     IREE_HAL_DRIVER_LOCAL_SYNC
  iree_hal_drivers_local_task_task_driver     IREE_HAL_DRIVER_LOCAL_TASK
  iree_hal_local_loaders_embedded_elf_loader  IREE_HAL_EXECUTABLE_LOADER_EMBEDDED_ELF
  iree_hal_local_loaders_system_library_loader IREE_HAL_EXECUTABLE_LOADER_SYSTEM_LIBRARY
  iree_hal_local_loaders_vmvx_module_loader   IREE_HAL_EXECUTABLE_LOADER_VMVX_MODULE)

# The IREE options `targets` need, in out_var.
function(_ireegen_runtime_options targets out_var)
  set(_options "")
  set(_rows "${_IREEGEN_IREE_TARGET_OPTIONS}")
  while(_rows)
    list(POP_FRONT _rows _target _option)
    if(_target IN_LIST targets)
      list(APPEND _options ${_option})
    endif()
  endwhile()
  set(${out_var} "${_options}" PARENT_SCOPE)
endfunction()

# The git tag of IREE's release that matches the installed iree-base-compiler:
# v3.13.0 for a release, iree-3.13.0rc20261016 for a nightly.
function(_ireegen_iree_git_tag target out_var)
  execute_process(
    COMMAND "${IREEGEN_PYTHON_EXECUTABLE}" -c
            "import importlib.metadata as m; print(m.version('iree-base-compiler'))"
    WORKING_DIRECTORY "${_IREEGEN_CMAKE_DIR}"
    OUTPUT_VARIABLE _version ERROR_QUIET RESULT_VARIABLE _rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc EQUAL 0 OR _version STREQUAL "")
    message(FATAL_ERROR "ireegen_add_model(${target}): cannot tell which IREE release to build the runtime from "
      "(${IREEGEN_PYTHON_EXECUTABLE} has no iree-base-compiler package); set -DIREERuntime_DIR, "
      "-DFETCHCONTENT_SOURCE_DIR_IREE or -DIREEGEN_IREE_SOURCE_URL")
  endif()
  if(_version MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$")
    set(${out_var} "v${_version}" PARENT_SCOPE)
  elseif(_version MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+rc[0-9]+$")
    set(${out_var} "iree-${_version}" PARENT_SCOPE)
  else()
    message(FATAL_ERROR "ireegen_add_model(${target}): iree-base-compiler ${_version} is no IREE release "
      "with a git tag; set -DFETCHCONTENT_SOURCE_DIR_IREE or -DIREEGEN_IREE_SOURCE_URL to its sources")
  endif()
endfunction()

# Checks, at the first model that needs IREE built here, what that build
# needs (CMake 3.26, python3 on PATH) and where the sources come from;
# declares the FetchContent content `iree`.
function(_ireegen_declare_runtime target mode)
  if(CMAKE_VERSION VERSION_LESS _IREEGEN_IREE_MIN_CMAKE)
    message(FATAL_ERROR "ireegen_add_model(${target}): ${mode} links the IREE runtime, and building it needs CMake "
      "${_IREEGEN_IREE_MIN_CMAKE} or newer (this is ${CMAKE_VERSION}); `pip install cmake` gets one, "
      "or set -DIREERuntime_DIR to a prebuilt runtime SDK")
  endif()
  # IREE's build runs `python3` by that name (generate_vm_isa.py).
  find_program(_ireegen_python3 NAMES python3 NO_CACHE
    NO_CMAKE_PATH NO_CMAKE_ENVIRONMENT_PATH NO_CMAKE_SYSTEM_PATH NO_CMAKE_INSTALL_PREFIX)
  if(NOT _ireegen_python3)
    message(FATAL_ERROR "ireegen_add_model(${target}): ${mode} links the IREE runtime, and building it runs "
      "`python3`, which is not on PATH; put a Python 3 on PATH as python3, or set -DIREERuntime_DIR "
      "to a prebuilt runtime SDK")
  endif()
  include(FetchContent)
  if(FETCHCONTENT_SOURCE_DIR_IREE)
    if(NOT EXISTS "${FETCHCONTENT_SOURCE_DIR_IREE}/CMakeLists.txt")
      message(FATAL_ERROR "ireegen_add_model(${target}): FETCHCONTENT_SOURCE_DIR_IREE ${FETCHCONTENT_SOURCE_DIR_IREE} "
        "is not an IREE source tree (it has no CMakeLists.txt)")
    endif()
    FetchContent_Declare(iree SOURCE_DIR "${FETCHCONTENT_SOURCE_DIR_IREE}" ${_IREEGEN_IREE_SUBPROJECT})
  elseif(IREEGEN_IREE_SOURCE_URL)
    if(NOT IREEGEN_IREE_SOURCE_SHA256 MATCHES "^[0-9a-fA-F]+$")
      message(FATAL_ERROR "ireegen_add_model(${target}): IREEGEN_IREE_SOURCE_URL needs "
        "-DIREEGEN_IREE_SOURCE_SHA256=<the archive's sha256 in hex>")
    endif()
    string(LENGTH "${IREEGEN_IREE_SOURCE_SHA256}" _length)
    if(NOT _length EQUAL 64)
      message(FATAL_ERROR "ireegen_add_model(${target}): IREEGEN_IREE_SOURCE_SHA256 has ${_length} hex digits, "
        "a sha256 has 64")
    endif()
    if((IREEGEN_IREE_NO_DOWNLOAD OR FETCHCONTENT_FULLY_DISCONNECTED)
       AND NOT IREEGEN_IREE_SOURCE_URL MATCHES "^file://")
      message(FATAL_ERROR "ireegen_add_model(${target}): IREEGEN_IREE_NO_DOWNLOAD or FETCHCONTENT_FULLY_DISCONNECTED "
        "forbids downloading IREEGEN_IREE_SOURCE_URL; give a file:// URL, FETCHCONTENT_SOURCE_DIR_IREE "
        "or IREERuntime_DIR")
    endif()
    if(IREEGEN_IREE_SOURCE_URL MATCHES "^file://(.*)$")
      # Its own if(): ${CMAKE_MATCH_1} in the same condition would be the previous match's.
      if(NOT EXISTS "${CMAKE_MATCH_1}")
        message(FATAL_ERROR "ireegen_add_model(${target}): IREEGEN_IREE_SOURCE_URL ${IREEGEN_IREE_SOURCE_URL}: "
          "no such file")
      endif()
    endif()
    FetchContent_Declare(iree URL "${IREEGEN_IREE_SOURCE_URL}" URL_HASH "SHA256=${IREEGEN_IREE_SOURCE_SHA256}"
      DOWNLOAD_EXTRACT_TIMESTAMP TRUE ${_IREEGEN_IREE_SUBPROJECT})
  else()
    if(IREEGEN_IREE_NO_DOWNLOAD OR FETCHCONTENT_FULLY_DISCONNECTED)
      message(FATAL_ERROR "ireegen_add_model(${target}): ${mode} links the IREE runtime, which find_package("
        "IREERuntime CONFIG) did not find, and IREEGEN_IREE_NO_DOWNLOAD or FETCHCONTENT_FULLY_DISCONNECTED "
        "forbids cloning IREE; set -DIREERuntime_DIR, -DFETCHCONTENT_SOURCE_DIR_IREE, or "
        "-DIREEGEN_IREE_SOURCE_URL=file://... with -DIREEGEN_IREE_SOURCE_SHA256")
    endif()
    _ireegen_iree_git_tag(${target} _tag)
    FetchContent_Declare(iree GIT_REPOSITORY "${_IREEGEN_IREE_GIT_REPOSITORY}" GIT_TAG "${_tag}"
      GIT_SHALLOW TRUE GIT_SUBMODULES ${_IREEGEN_IREE_GIT_SUBMODULES} GIT_PROGRESS TRUE ${_IREEGEN_IREE_SUBPROJECT})
  endif()
endfunction()

# IREE's sources fetched and added as a subproject, once per build tree.
# Every loader and driver of the table is configured, but only what the
# models link is built (EXCLUDE_FROM_ALL): a model added later with another
# executable format finds its loader there.
function(_ireegen_make_runtime_available)
  set(_rows "${_IREEGEN_IREE_OPTIONS}")
  while(_rows)
    list(POP_FRONT _rows _option _value)
    # A value the project set (-DIREE_...=) wins.
    if(NOT DEFINED ${_option})
      set(${_option} ${_value})
    endif()
  endwhile()
  set(_rows "${_IREEGEN_IREE_TARGET_OPTIONS}")
  while(_rows)
    list(POP_FRONT _rows _target _option)
    if(NOT DEFINED ${_option})
      set(${_option} ON)
    endif()
  endwhile()
  if(CMAKE_VERSION VERSION_LESS 3.28)
    # No EXCLUDE_FROM_ALL for FetchContent_Declare before CMake 3.28.
    FetchContent_GetProperties(iree)
    if(NOT iree_POPULATED)
      FetchContent_Populate(iree)
    endif()
    add_subdirectory("${iree_SOURCE_DIR}" "${iree_BINARY_DIR}" EXCLUDE_FROM_ALL SYSTEM)
  else()
    FetchContent_MakeAvailable(iree)
  endif()
endfunction()

# The runtime must have every target the model links: a missing loader or
# driver would otherwise fail only at link time.
function(_ireegen_check_runtime target runtime_targets)
  foreach(_target IN LISTS runtime_targets)
    if(NOT TARGET ${_target})
      _ireegen_runtime_options("${_target}" _option)
      if(_option)
        set(_why "; rebuild it with -D${_option}=ON")
      else()
        set(_why "")
      endif()
      get_property(_built_here GLOBAL PROPERTY _IREEGEN_IREE_BUILT_HERE)
      if(_built_here)
        set(_where "the IREE runtime built in this build tree")
      elseif(IREERuntime_DIR AND NOT IREERuntime_DIR MATCHES "-NOTFOUND$")
        set(_where "the IREE runtime SDK at ${IREERuntime_DIR}")
      else()
        set(_where "the IREE runtime in this build")
      endif()
      message(FATAL_ERROR "ireegen_add_model(${target}): ${_where} has no ${_target}, which this model links${_why}")
    endif()
  endforeach()
endfunction()

function(_ireegen_require_runtime target mode runtime_targets)
  if(NOT TARGET iree_base_base)
    # The SDK the user named (find_package() forgets it when it fails).
    set(_given "${IREERuntime_DIR}")
    if(NOT _given OR _given MATCHES "-NOTFOUND$")
      set(_given "$ENV{IREERuntime_DIR}")
    endif()
    find_package(Threads REQUIRED)
    find_package(IREERuntime CONFIG QUIET)
    if(NOT IREERuntime_FOUND)
      if(_given)
        message(FATAL_ERROR "ireegen_add_model(${target}): IREERuntime_DIR ${_given} has no "
          "IREERuntimeConfig.cmake; point it at an IREE runtime's lib/cmake/IREE, or leave it unset to "
          "build the runtime here (docs/iree-runtime.md)")
      endif()
      _ireegen_declare_runtime(${target} "${mode}")
      message(STATUS "ireegen: no IREE runtime SDK found (IREERuntime_DIR); building IREE's runtime in this build tree")
      _ireegen_make_runtime_available()
      set_property(GLOBAL PROPERTY _IREEGEN_IREE_BUILT_HERE TRUE)
    endif()
  endif()
  _ireegen_check_runtime(${target} "${runtime_targets}")
endfunction()
