# ireegen_add_model(): see ireegenConfig.cmake for the signature.
include_guard(GLOBAL)

# The default target triple: the toolchain's when cross compiling.
function(_ireegen_default_triple out_var)
  set(_triple "")
  if(CMAKE_C_COMPILER_TARGET)
    set(_triple "${CMAKE_C_COMPILER_TARGET}")
  elseif(CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR)
    set(_arch "${CMAKE_SYSTEM_PROCESSOR}")
    if(_arch MATCHES "^(arm64|ARM64)$")
      set(_arch aarch64)
    elseif(_arch MATCHES "^(AMD64|amd64|x64)$")
      set(_arch x86_64)
    endif()
    if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
      set(_triple "${_arch}-unknown-linux-gnu")
    elseif(CMAKE_SYSTEM_NAME STREQUAL "Generic")
      set(_triple "${_arch}-unknown-unknown-eabi-elf")
    else()
      set(_triple "${_arch}-unknown-${CMAKE_SYSTEM_NAME}")
      string(TOLOWER "${_triple}" _triple)
    endif()
  endif()
  set(${out_var} "${_triple}" PARENT_SCOPE)
endfunction()

# find_package(IREERuntime) once, on first need, with a clear error.
macro(_ireegen_require_runtime target)
  if(NOT TARGET iree_base_base)
    find_package(Threads REQUIRED)
    find_package(IREERuntime CONFIG QUIET)
    if(NOT IREERuntime_FOUND)
      message(FATAL_ERROR
        "ireegen_add_model(${target}): this execution model needs the IREE runtime C SDK, "
        "and find_package(IREERuntime CONFIG) found none. Build and install IREE's runtime "
        "(-DIREE_BUILD_COMPILER=OFF) and configure with "
        "-DIREERuntime_DIR=<install prefix>/lib/cmake/IREE.")
    endif()
  endif()
endmacro()

function(ireegen_add_model target)
  set(_one SRC NAME EXECUTION_MODEL EXECUTABLE_FORMAT MODULE_FORMAT TARGET_TRIPLE
           TARGET_CPU TARGET_CPU_FEATURES OUTPUT_DIR)
  cmake_parse_arguments(PARSE_ARGV 1 _ARG "GENERATE_ONLY" "${_one}" "FLAGS")
  if(_ARG_UNPARSED_ARGUMENTS)
    list(JOIN _ARG_UNPARSED_ARGUMENTS " " _unknown)
    list(JOIN _one " " _keywords)
    message(FATAL_ERROR "ireegen_add_model(${target}): unknown argument(s) ${_unknown}; "
      "the keywords are ${_keywords} FLAGS GENERATE_ONLY")
  endif()
  if(_ARG_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR "ireegen_add_model(${target}): ${_ARG_KEYWORDS_MISSING_VALUES} needs a value")
  endif()
  if(NOT _ARG_SRC)
    message(FATAL_ERROR "ireegen_add_model(${target}): SRC <model file> is required")
  endif()
  if(TARGET ${target})
    message(FATAL_ERROR "ireegen_add_model(${target}): a target with that name already exists")
  endif()
  # A target named like a system library the model links (runtimeless links
  # libm) would link to itself.
  if(target MATCHES "^(m|c|dl|rt|pthread)$")
    message(FATAL_ERROR "ireegen_add_model(${target}): ${target} is the name of a system library "
      "(lib${target}) that generated code may link; choose another target name (NAME ${target} keeps the C prefix)")
  endif()
  get_filename_component(_src "${_ARG_SRC}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${_src}")
    message(FATAL_ERROR "ireegen_add_model(${target}): SRC ${_src} does not exist")
  endif()
  if(NOT _ARG_NAME)
    set(_ARG_NAME "${target}")
  endif()
  if(NOT _ARG_EXECUTION_MODEL)
    set(_ARG_EXECUTION_MODEL async)
  endif()
  if(NOT _ARG_OUTPUT_DIR)
    set(_ARG_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/ireegen/${target}")
  endif()
  get_filename_component(_outdir "${_ARG_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")

  set(_args --execution-model "${_ARG_EXECUTION_MODEL}")
  if(_ARG_MODULE_FORMAT)
    list(APPEND _args --module-format "${_ARG_MODULE_FORMAT}")
  endif()
  if(_ARG_EXECUTABLE_FORMAT)
    list(APPEND _args --executable-format "${_ARG_EXECUTABLE_FORMAT}")
  endif()
  if(NOT _ARG_TARGET_TRIPLE AND NOT _ARG_EXECUTABLE_FORMAT STREQUAL "vmvx"
     AND NOT _ARG_EXECUTION_MODEL STREQUAL "inline-static")
    _ireegen_default_triple(_ARG_TARGET_TRIPLE)
  endif()
  foreach(_opt TARGET_TRIPLE TARGET_CPU TARGET_CPU_FEATURES)
    if(_ARG_${_opt})
      string(TOLOWER "${_opt}" _flag)
      string(REPLACE "_" "-" _flag "${_flag}")
      list(APPEND _args "--${_flag}=${_ARG_${_opt}}")
    endif()
  endforeach()
  foreach(_flag IN LISTS _ARG_FLAGS)
    list(APPEND _args "--iree-flag=${_flag}")
  endforeach()
  if(IREEGEN_IREE_COMPILE)
    list(APPEND _args "--iree-compile=${IREEGEN_IREE_COMPILE}")
  endif()

  # Validate and learn the outputs now, with the same tables emit uses.
  execute_process(
    COMMAND "${IREEGEN_PYTHON_EXECUTABLE}" -m ireegen resolve --name "${_ARG_NAME}" -o "${_outdir}" ${_args}
    WORKING_DIRECTORY "${_IREEGEN_CMAKE_DIR}"
    OUTPUT_VARIABLE _resolved ERROR_VARIABLE _error RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    string(STRIP "${_error}" _error)
    message(FATAL_ERROR "ireegen_add_model(${target}): ${_error}")
  endif()
  cmake_language(EVAL CODE "${_resolved}")

  # Every option is in this file; it is rewritten only when they change, so
  # changing FLAGS or any option re-runs this model (and only this model)
  # with Makefiles too, not just with Ninja.
  set(_options_file "${CMAKE_CURRENT_BINARY_DIR}/ireegen/${target}.options")
  string(REPLACE ";" "\n" _options_text "${_src}\n${_outdir}\n${_ARG_NAME};${_args}\ncompiler ${_IREEGEN_COMPILER_VERSION}\n")
  set(_old_options "")
  if(EXISTS "${_options_file}")
    file(READ "${_options_file}" _old_options)
  endif()
  if(NOT _old_options STREQUAL _options_text)
    file(WRITE "${_options_file}" "${_options_text}")
  endif()

  add_custom_command(
    OUTPUT ${_IREEGEN_OUTPUTS}
    COMMAND "${IREEGEN_PYTHON_EXECUTABLE}" -m ireegen emit "${_src}" -o "${_outdir}" --name "${_ARG_NAME}" ${_args}
    DEPENDS "${_src}" "${_options_file}" ${_IREEGEN_GENERATOR_FILES} ${_IREEGEN_COMPILER_FILES}
    WORKING_DIRECTORY "${_IREEGEN_CMAKE_DIR}"
    COMMENT "ireegen: generating ${_ARG_NAME} (${_IREEGEN_EXECUTION_MODEL}, ${_IREEGEN_EXECUTABLE_FORMAT}, ${_IREEGEN_MODULE_FORMAT}) from ${_ARG_SRC}"
    VERBATIM)
  if(_ARG_GENERATE_ONLY)
    # Only the sources: for projects that compile them with their own rules
    # (and their own IREE runtime). No library, no runtime needed here.
    add_custom_target(${target} ALL DEPENDS ${_IREEGEN_OUTPUTS})
    set_target_properties(${target} PROPERTIES
      IREEGEN_SOURCES "${_IREEGEN_SOURCES}"
      IREEGEN_OBJECTS "${_IREEGEN_OBJECTS}"
      IREEGEN_RUNTIME_TARGETS "${_IREEGEN_RUNTIME_TARGETS}"
      IREEGEN_OUTPUT_DIR "${_outdir}")
    return()
  endif()
  add_custom_target(${target}_generate DEPENDS ${_IREEGEN_OUTPUTS})

  add_library(${target} STATIC ${_IREEGEN_SOURCES} ${_IREEGEN_OBJECTS})
  if(_IREEGEN_OBJECTS)
    set_source_files_properties(${_IREEGEN_OBJECTS} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  endif()
  add_dependencies(${target} ${target}_generate)
  target_include_directories(${target} PUBLIC "${_outdir}")
  set_target_properties(${target} PROPERTIES
    IREEGEN_NAME "${_ARG_NAME}"
    IREEGEN_EXECUTION_MODEL "${_IREEGEN_EXECUTION_MODEL}"
    IREEGEN_EXECUTABLE_FORMAT "${_IREEGEN_EXECUTABLE_FORMAT}"
    IREEGEN_MODULE_FORMAT "${_IREEGEN_MODULE_FORMAT}"
    IREEGEN_OUTPUT_DIR "${_outdir}")
  target_compile_features(${target} PRIVATE c_std_11)
  if(_IREEGEN_RUNTIME_TARGETS)
    _ireegen_require_runtime(${target})
    target_link_libraries(${target} PUBLIC ${_IREEGEN_RUNTIME_TARGETS})
  endif()
  if(_IREEGEN_LINK_LIBRARIES AND NOT WIN32)
    # runtimeless: the executables call libm
    target_link_libraries(${target} PUBLIC ${_IREEGEN_LINK_LIBRARIES})
  endif()
endfunction()
