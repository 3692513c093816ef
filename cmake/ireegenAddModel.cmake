# ireegen_add_model(): see ireegenConfig.cmake for the signature.
include_guard(GLOBAL)

# The default target triple: the toolchain's when cross compiling
# (IREEGEN_TARGET_TRIPLE from ireegen's toolchain files first).
function(_ireegen_default_triple out_var)
  set(_triple "")
  if(IREEGEN_TARGET_TRIPLE)
    set(_triple "${IREEGEN_TARGET_TRIPLE}")
  elseif(CMAKE_C_COMPILER_TARGET)
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

# find_package(IREERuntime) once, on first need.  Without an SDK the error is
# one sentence: the way to build with a C compiler alone (runtimeless), and
# the way to get the SDK.  `mode` is "EXECUTION_MODEL <m>", and says when it
# is the default.
macro(_ireegen_require_runtime target mode)
  if(NOT TARGET iree_base_base)
    find_package(Threads REQUIRED)
    find_package(IREERuntime CONFIG QUIET)
    if(NOT IREERuntime_FOUND)
      message(FATAL_ERROR
        "ireegen_add_model(${target}): ${mode} links the IREE runtime C SDK, which "
        "find_package(IREERuntime CONFIG) did not find; add EXECUTION_MODEL runtimeless to build with a C "
        "compiler alone, or build the SDK (ireegen's docs/iree-runtime.md) and set -DIREERuntime_DIR.")
    endif()
  endif()
endmacro()

# The default DATA_FORMAT: asm where the C compiler has a GNU-style assembler
# step (it assembles .S with .incbin), else c.  Empty when no C compiler is
# enabled (GENERATE_ONLY in a NONE project): emit's own default then.
function(_ireegen_default_data_format out_var)
  set(_format "")
  if(CMAKE_C_COMPILER_LOADED)
    set(_format c)
    if(CMAKE_C_COMPILER_ID MATCHES "^(GNU|Clang|AppleClang|ARMClang|IntelLLVM)$"
       AND NOT CMAKE_C_COMPILER_FRONTEND_VARIANT STREQUAL "MSVC")
      set(_format asm)
    endif()
  endif()
  set(${out_var} "${_format}" PARENT_SCOPE)
endfunction()

# Makes the ASM language usable for a target in the calling directory, which
# may have declared only C.  enable_language() defines the language's rule
# variables in the scope it runs in, and a function's scope ends with it, so
# ireegen_add_model() copies what it defined into the caller's scope and, by
# a deferred call, into the directory's own (the caller may be a function).
macro(_ireegen_set_asm_variables)
  get_property(_ireegen_asm_vars GLOBAL PROPERTY _IREEGEN_ASM_VARIABLES)
  foreach(_ireegen_var IN LISTS _ireegen_asm_vars)
    get_property(_ireegen_value GLOBAL PROPERTY "_IREEGEN_ASM_VARIABLE_${_ireegen_var}")
    set(${_ireegen_var} "${_ireegen_value}")
  endforeach()
endmacro()

macro(_ireegen_enable_asm)
  if(NOT DEFINED CMAKE_ASM_COMPILE_OBJECT)
    get_cmake_property(_ireegen_before VARIABLES)
    enable_language(ASM)
    get_cmake_property(_ireegen_after VARIABLES)
    list(REMOVE_ITEM _ireegen_after ${_ireegen_before} _ireegen_before)
    list(REMOVE_DUPLICATES _ireegen_after)
    set_property(GLOBAL PROPERTY _IREEGEN_ASM_VARIABLES "${_ireegen_after}")
    foreach(_ireegen_var IN LISTS _ireegen_after)
      set_property(GLOBAL PROPERTY "_IREEGEN_ASM_VARIABLE_${_ireegen_var}" "${${_ireegen_var}}")
      set(${_ireegen_var} "${${_ireegen_var}}" PARENT_SCOPE)
    endforeach()
    get_property(_ireegen_deferred DIRECTORY PROPERTY _IREEGEN_ASM_DEFERRED)
    if(NOT _ireegen_deferred)
      set_property(DIRECTORY PROPERTY _IREEGEN_ASM_DEFERRED TRUE)
      cmake_language(DEFER CALL _ireegen_set_asm_variables)
    endif()
  endif()
endmacro()

function(ireegen_add_model target)
  set(_one SRC NAME EXECUTION_MODEL EXECUTABLE_FORMAT MODULE_FORMAT DATA_FORMAT TARGET_TRIPLE
           TARGET_CPU TARGET_CPU_FEATURES OUTPUT_DIR CONSTANTS_SECTION ARENA_SECTION OPTIMIZE_FOR VERIFY
           VERIFY_INPUTS KERNELS TUNE)
  cmake_parse_arguments(PARSE_ARGV 1 _ARG "GENERATE_ONLY;NO_BUILTIN_KERNELS;QUANTIZED_IO" "${_one}" "FLAGS;INPUT_SHAPES;INPUT_VALUES")
  if(_ARG_UNPARSED_ARGUMENTS)
    list(JOIN _ARG_UNPARSED_ARGUMENTS " " _unknown)
    list(JOIN _one " " _keywords)
    message(FATAL_ERROR "ireegen_add_model(${target}): unknown argument(s) ${_unknown}; "
      "the keywords are ${_keywords} FLAGS INPUT_SHAPES INPUT_VALUES GENERATE_ONLY NO_BUILTIN_KERNELS QUANTIZED_IO")
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
  if(NOT CMAKE_HOST_WIN32 AND _ARG_SRC MATCHES "\\\\")
    # CMake turns it into '/' in paths, so the file could not be named here.
    message(FATAL_ERROR "ireegen_add_model(${target}): SRC ${_ARG_SRC}: CMake cannot take a path with '\\' "
      "(it reads it as a path separator); rename or move it")
  endif()
  get_filename_component(_src "${_ARG_SRC}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${_src}")
    message(FATAL_ERROR "ireegen_add_model(${target}): SRC ${_src} does not exist")
  endif()
  if(NOT _ARG_NAME)
    set(_ARG_NAME "${target}")
  endif()
  # The default is the CLI's (async, what IREE runtime users expect); without
  # an IREE runtime SDK the configure step says to choose runtimeless.
  set(_mode_text "EXECUTION_MODEL ${_ARG_EXECUTION_MODEL}")
  if(NOT _ARG_EXECUTION_MODEL)
    set(_ARG_EXECUTION_MODEL async)
    set(_mode_text "EXECUTION_MODEL async (the default)")
  endif()
  if(NOT _ARG_OUTPUT_DIR)
    set(_ARG_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/ireegen/${target}")
  endif()
  # VERIFY (default ON): emit runs the generated code against async before
  # writing it, and the build fails if any output differs.  STRICT: it also
  # fails when a function's outputs never moved across the inputs tried
  # (verification proved nothing; otherwise a warning in the build output).
  set(_emit_only_args "")
  if(DEFINED _ARG_VERIFY)
    if(_ARG_VERIFY MATCHES "^(STRICT|strict)$")
      set(_emit_only_args --verify-strict)
    elseif(NOT _ARG_VERIFY MATCHES "^(ON|OFF|TRUE|FALSE|YES|NO|1|0|on|off|true|false|yes|no)$")
      message(FATAL_ERROR "ireegen_add_model(${target}): VERIFY ${_ARG_VERIFY}: expected ON, OFF or STRICT")
    elseif(NOT _ARG_VERIFY)
      set(_emit_only_args --no-verify)
    endif()
  endif()
  # VERIFY_INPUTS <x.npz>: verify on these inputs (a dependency) instead of drawn ones.
  set(_verify_inputs "")
  if(_ARG_VERIFY_INPUTS)
    get_filename_component(_verify_inputs "${_ARG_VERIFY_INPUTS}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${_verify_inputs}")
      message(FATAL_ERROR "ireegen_add_model(${target}): VERIFY_INPUTS ${_verify_inputs} does not exist")
    endif()
    list(APPEND _emit_only_args --verify-inputs "${_verify_inputs}")
  endif()
  # NO_BUILTIN_KERNELS: IREE's own code for a QDQ int8 model on a Cortex-M,
  # not ireegen's int8 kernels (docs/kernels-int8.md).
  if(_ARG_NO_BUILTIN_KERNELS)
    list(APPEND _emit_only_args --no-builtin-kernels)
  endif()
  # QUANTIZED_IO: a QDQ model takes and returns its int8 tensors (docs/kernels-int8.md).
  if(_ARG_QUANTIZED_IO)
    list(APPEND _emit_only_args --quantized-io)
  endif()
  get_filename_component(_outdir "${_ARG_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  # IREEGEN_CACHE / IREEGEN_CACHE_MODE: the shared output cache (docs/cache.md).
  # Not an option of the output (not in the options file): only on the command.
  set(_cache_args "")
  if(IREEGEN_CACHE)
    list(APPEND _cache_args --cache "${IREEGEN_CACHE}")
  endif()
  if(IREEGEN_CACHE_MODE)
    list(APPEND _cache_args --cache-mode "${IREEGEN_CACHE_MODE}")
  endif()

  set(_args --execution-model "${_ARG_EXECUTION_MODEL}")
  if(_ARG_MODULE_FORMAT)
    list(APPEND _args --module-format "${_ARG_MODULE_FORMAT}")
  endif()
  if(_ARG_EXECUTABLE_FORMAT)
    list(APPEND _args --executable-format "${_ARG_EXECUTABLE_FORMAT}")
  endif()
  if(NOT _ARG_DATA_FORMAT AND NOT _ARG_MODULE_FORMAT STREQUAL "emitc")
    _ireegen_default_data_format(_ARG_DATA_FORMAT)
  endif()
  if(_ARG_DATA_FORMAT STREQUAL "asm" AND CMAKE_C_COMPILER_FRONTEND_VARIANT STREQUAL "MSVC")
    message(FATAL_ERROR "ireegen_add_model(${target}): DATA_FORMAT asm needs a GNU-style assembler (.S with "
      ".incbin), which the MSVC-style compiler ${CMAKE_C_COMPILER_ID} has not; use DATA_FORMAT c")
  endif()
  if(_ARG_DATA_FORMAT)
    list(APPEND _args --data-format "${_ARG_DATA_FORMAT}")
  endif()
  if(NOT _ARG_TARGET_TRIPLE AND NOT _ARG_EXECUTABLE_FORMAT STREQUAL "vmvx"
     AND NOT _ARG_EXECUTION_MODEL STREQUAL "inline-static")
    _ireegen_default_triple(_ARG_TARGET_TRIPLE)
    if(NOT _ARG_TARGET_CPU AND IREEGEN_TARGET_CPU AND _ARG_TARGET_TRIPLE STREQUAL IREEGEN_TARGET_TRIPLE)
      set(_ARG_TARGET_CPU "${IREEGEN_TARGET_CPU}")
    endif()
  endif()
  foreach(_opt TARGET_TRIPLE TARGET_CPU TARGET_CPU_FEATURES)
    if(_ARG_${_opt})
      string(TOLOWER "${_opt}" _flag)
      string(REPLACE "_" "-" _flag "${_flag}")
      list(APPEND _args "--${_flag}=${_ARG_${_opt}}")
    endif()
  endforeach()
  if(_ARG_OPTIMIZE_FOR)
    list(APPEND _args "--optimize-for=${_ARG_OPTIMIZE_FOR}")
  endif()
  # TUNE off|quick|full: emit's per-model search of IREE configurations
  # (docs/tuning.md); `ireegen resolve` validates it with the other options.
  if(DEFINED _ARG_TUNE)
    list(APPEND _args "--tune=${_ARG_TUNE}")
  endif()
  foreach(_flag IN LISTS _ARG_FLAGS)
    list(APPEND _args "--iree-flag=${_flag}")
  endforeach()
  foreach(_shape IN LISTS _ARG_INPUT_SHAPES)
    list(APPEND _args "--input-shape=${_shape}")
  endforeach()
  foreach(_value IN LISTS _ARG_INPUT_VALUES)
    list(APPEND _args "--input-value=${_value}")
  endforeach()
  if(IREEGEN_IREE_COMPILE)
    list(APPEND _args "--iree-compile=${IREEGEN_IREE_COMPILE}")
  endif()
  # KERNELS <spec.json>: your own C kernels (docs/kernels.md). `resolve`
  # checks the spec and lists its files (KERNEL_FILES), which the step
  # depends on; the spec itself re-configures when it changes.
  if(_ARG_KERNELS)
    get_filename_component(_kernels "${_ARG_KERNELS}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${_kernels}" OR IS_DIRECTORY "${_kernels}")
      message(FATAL_ERROR "ireegen_add_model(${target}): KERNELS ${_kernels} is not a file")
    endif()
    list(APPEND _args --kernels "${_kernels}")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_kernels}")
  endif()

  # Validate and learn the outputs now, with the same tables emit uses.
  # The answer is data, read line by line; nothing of it is evaluated as
  # CMake code (paths and external-data names come from outside).  The
  # format is in ireegen/cmake_resolve.py.
  set(_resolved_file "${CMAKE_CURRENT_BINARY_DIR}/ireegen/${target}.resolved")
  file(MAKE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/ireegen")
  execute_process(
    COMMAND "${IREEGEN_PYTHON_EXECUTABLE}" -m ireegen resolve --name "${_ARG_NAME}" -o "${_outdir}" --src "${_src}" ${_args}
    WORKING_DIRECTORY "${_IREEGEN_CMAKE_DIR}"
    OUTPUT_FILE "${_resolved_file}" ERROR_VARIABLE _error RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    string(STRIP "${_error}" _error)
    message(FATAL_ERROR "ireegen_add_model(${target}): ${_error}")
  endif()
  file(STRINGS "${_resolved_file}" _resolved_lines ENCODING UTF-8)
  list(POP_FRONT _resolved_lines _resolved_format)
  if(NOT _resolved_format STREQUAL "ireegen-resolve 1")
    message(FATAL_ERROR "ireegen_add_model(${target}): `ireegen resolve` answered in an unknown format "
      "(${IREEGEN_PYTHON_EXECUTABLE} runs another ireegen than this CMake package's?)")
  endif()
  foreach(_line IN LISTS _resolved_lines)
    string(FIND "${_line}" "=" _eq)
    string(SUBSTRING "${_line}" 0 ${_eq} _key)
    math(EXPR _eq "${_eq} + 1")
    string(SUBSTRING "${_line}" ${_eq} -1 _value)
    string(REPLACE "%3B" ";" _value "${_value}")
    string(REPLACE "%5B" "[" _value "${_value}")
    string(REPLACE "%5D" "]" _value "${_value}")
    string(REPLACE "%5C" "\\" _value "${_value}")
    string(REPLACE "%25" "%" _value "${_value}")
    if(_key MATCHES "^([A-Z_]+)\\+$")
      list(APPEND "_IREEGEN_${CMAKE_MATCH_1}" "${_value}")
    elseif(_key MATCHES "^[A-Z_]+$")
      set("_IREEGEN_${_key}" "${_value}")
    endif()
  endforeach()
  if(_src MATCHES "\\.onnx$")
    # The .onnx names its external data files: list them again when it changes.
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_src}")
  endif()

  # Every option is in this file; it is rewritten only when they change, so
  # changing FLAGS or any option re-runs this model (and only this model)
  # with Makefiles too, not just with Ninja.
  set(_options_file "${CMAKE_CURRENT_BINARY_DIR}/ireegen/${target}.options")
  string(REPLACE ";" "\n" _options_text "${_src}\n${_outdir}\n${_ARG_NAME};${_args};${_emit_only_args}\ncompiler ${_IREEGEN_COMPILER_VERSION}\n")
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
            ${_emit_only_args} ${_cache_args}
    DEPENDS "${_src}" ${_IREEGEN_MODEL_FILES} ${_IREEGEN_KERNEL_FILES} ${_verify_inputs} "${_options_file}" ${_IREEGEN_GENERATOR_FILES} ${_IREEGEN_COMPILER_FILES}
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
      IREEGEN_DATA_FORMAT "${_IREEGEN_DATA_FORMAT}"
      IREEGEN_DATA_BLOBS "${_IREEGEN_DATA_BLOBS}"
      IREEGEN_OUTPUT_DIR "${_outdir}")
    return()
  endif()
  add_custom_target(${target}_generate DEPENDS ${_IREEGEN_OUTPUTS})

  if(_IREEGEN_ASM_SOURCES)
    _ireegen_enable_asm()
  endif()
  add_library(${target} STATIC ${_IREEGEN_SOURCES} ${_IREEGEN_OBJECTS})
  if(_IREEGEN_OBJECTS)
    set_source_files_properties(${_IREEGEN_OBJECTS} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  endif()
  if(_IREEGEN_ASM_SOURCES)
    # The assembler .incbin's the blobs: rebuild when they change (no
    # depfile lists them), and find them on the include path below.
    set_source_files_properties(${_IREEGEN_ASM_SOURCES} PROPERTIES
      GENERATED TRUE OBJECT_DEPENDS "${_IREEGEN_DATA_BLOBS}")
  endif()
  add_dependencies(${target} ${target}_generate)
  target_include_directories(${target} PUBLIC "${_outdir}")
  set_target_properties(${target} PROPERTIES
    IREEGEN_NAME "${_ARG_NAME}"
    IREEGEN_EXECUTION_MODEL "${_IREEGEN_EXECUTION_MODEL}"
    IREEGEN_EXECUTABLE_FORMAT "${_IREEGEN_EXECUTABLE_FORMAT}"
    IREEGEN_MODULE_FORMAT "${_IREEGEN_MODULE_FORMAT}"
    IREEGEN_DATA_FORMAT "${_IREEGEN_DATA_FORMAT}"
    IREEGEN_OUTPUT_DIR "${_outdir}")
  target_compile_features(${target} PRIVATE c_std_11)
  if(_IREEGEN_RUNTIME_TARGETS)
    _ireegen_require_runtime(${target} "${_mode_text}")
    target_link_libraries(${target} PUBLIC ${_IREEGEN_RUNTIME_TARGETS})
  endif()
  if(_IREEGEN_LINK_LIBRARIES AND NOT WIN32)
    # runtimeless: the executables call libm
    target_link_libraries(${target} PUBLIC ${_IREEGEN_LINK_LIBRARIES})
  endif()
  # runtimeless on bare metal: weak fmaximumf & co. that LLVM calls on
  # soft-float cores and newlib 3.3 lacks (a C library that has them wins).
  if(_IREEGEN_EXECUTION_MODEL STREQUAL "runtimeless" AND CMAKE_SYSTEM_NAME STREQUAL "Generic")
    target_sources(${target} PRIVATE "${_IREEGEN_CMAKE_DIR}/../templates/baremetal/libm_compat.c")
  endif()
  # runtimeless placement: the sections of the const weights and of the
  # default arena (NAME_CONSTANTS_SECTION / NAME_ARENA_SECTION in the C).
  string(TOUPPER "${_ARG_NAME}" _macro)
  foreach(_place CONSTANTS ARENA)
    if(_ARG_${_place}_SECTION)
      target_compile_definitions(${target} PRIVATE "${_macro}_${_place}_SECTION=\"${_ARG_${_place}_SECTION}\"")
    endif()
  endforeach()
  # The model's flash and RAM, printed after each build (ireegen size).
  if(IREEGEN_PRINT_FOOTPRINT AND _IREEGEN_EXECUTION_MODEL STREQUAL "runtimeless")
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND "${IREEGEN_PYTHON_EXECUTABLE}" -m ireegen size "${_outdir}" --objects "$<TARGET_OBJECTS:${target}>"
              --json "${CMAKE_CURRENT_BINARY_DIR}/ireegen/${target}.footprint.json"
      WORKING_DIRECTORY "${_IREEGEN_CMAKE_DIR}"
      COMMAND_EXPAND_LISTS
      VERBATIM)
  endif()
endfunction()
