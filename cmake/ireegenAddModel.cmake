# ireegen_add_model(): see ireegenConfig.cmake for the signature.
#
# ireegen_add_model() parses its arguments, then hands them to small steps:
#   _ireegen_check_arguments     every error about one argument, one line naming its keyword
#   _ireegen_default_arguments   what an argument left out means
#   _ireegen_flags               emit's command line, from the keyword-to-flag tables below
#   _ireegen_resolve             `ireegen resolve`: the options checked with emit's tables, the outputs listed
#   _ireegen_write_options       the file a change of any option touches
#   _ireegen_add_generate_command, _ireegen_add_generate_target, _ireegen_add_library: the targets
# A step reads the _ARG_* variables of the ireegen_add_model() call it runs in
# (CMake functions see their caller's variables) and returns its results with
# set(... PARENT_SCOPE).
include_guard(GLOBAL)
include("${CMAKE_CURRENT_LIST_DIR}/ireegenRuntime.cmake")

# ireegen_add_model()'s keywords, cmake_parse_arguments()'s three kinds.
set(_IREEGEN_OPTION_KEYWORDS GENERATE_ONLY NO_BUILTIN_KERNELS QUANTIZED_IO PARALLEL_FOR)
set(_IREEGEN_VALUE_KEYWORDS SRC NAME EXECUTION_MODEL EXECUTABLE_FORMAT MODULE_FORMAT DATA_FORMAT TARGET_TRIPLE
  TARGET_CPU TARGET_CPU_FEATURES OUTPUT_DIR CONSTANTS_SECTION ARENA_SECTION OPTIMIZE_FOR VERIFY
  VERIFY_INPUTS KERNELS TUNE THREADS MAX_DETECTIONS)
set(_IREEGEN_LIST_KEYWORDS FLAGS INPUT_SHAPES INPUT_VALUES)

# The keyword-to-flag tables: pairs of a keyword (or an IREEGEN_* variable of
# the build) and emit's flag, in the order of emit's command line.
#   KEYWORD=VALUE   the flag alone, when the keyword's value is VALUE
#   a list keyword  the flag once per value
#   a value         the flag with the value, when the value is true to if(),
#                   or whenever given for the keywords in _IREEGEN_GIVEN_KEYWORDS
# A flag that ends in `=` takes the value in the same argument (--tune=quick),
# any other in the next one (--module-format emitc).
#
# The options of the output: `ireegen resolve` checks them, emit takes them.
set(_IREEGEN_OUTPUT_FLAGS
  EXECUTION_MODEL      --execution-model
  MODULE_FORMAT        --module-format
  EXECUTABLE_FORMAT    --executable-format
  DATA_FORMAT          --data-format
  TARGET_TRIPLE        --target-triple=
  TARGET_CPU           --target-cpu=
  TARGET_CPU_FEATURES  --target-cpu-features=
  OPTIMIZE_FOR         --optimize-for=
  TUNE                 --tune=
  THREADS              --threads=
  FLAGS                --iree-flag=
  INPUT_SHAPES         --input-shape=
  INPUT_VALUES         --input-value=
  IREEGEN_IREE_COMPILE --iree-compile=
  KERNELS              --kernels)
# Options only emit takes: how it verifies (docs/verification.md) and the
# int8 code of a QDQ model (docs/kernels-int8.md).
set(_IREEGEN_EMIT_ONLY_FLAGS
  VERIFY=STRICT           --verify-strict
  VERIFY=OFF              --no-verify
  VERIFY_INPUTS           --verify-inputs
  NO_BUILTIN_KERNELS=TRUE --no-builtin-kernels
  QUANTIZED_IO=TRUE       --quantized-io
  MAX_DETECTIONS          --max-detections=)
# The shared output cache (docs/cache.md): not an option of the output (not in
# the options file), only on emit's command line.
set(_IREEGEN_CACHE_FLAGS
  IREEGEN_CACHE        --cache
  IREEGEN_CACHE_MODE   --cache-mode)
# Values passed whenever given: `off` is a value of TUNE, 0 of THREADS, and
# both are false to if().
set(_IREEGEN_GIVEN_KEYWORDS TUNE THREADS)

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


# Every error about one argument, in one line naming its keyword.  Sets, in
# the caller: _src (SRC, absolute), _mode_text (the execution model as the
# runtime's error names it), VERIFY normalized to ON, OFF or STRICT, and
# VERIFY_INPUTS and KERNELS made absolute (VERIFY_INPUTS also as
# _verify_inputs, empty without one).
function(_ireegen_check_arguments target)
  if(_ARG_UNPARSED_ARGUMENTS)
    list(JOIN _ARG_UNPARSED_ARGUMENTS " " _unknown)
    list(JOIN _IREEGEN_VALUE_KEYWORDS " " _keywords)
    message(FATAL_ERROR "ireegen_add_model(${target}): unknown argument(s) ${_unknown}; "
      "the keywords are ${_keywords} FLAGS INPUT_SHAPES INPUT_VALUES GENERATE_ONLY NO_BUILTIN_KERNELS QUANTIZED_IO "
      "PARALLEL_FOR")
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
  set(_src "${_src}" PARENT_SCOPE)
  # The default is the CLI's (async, what IREE runtime users expect); without
  # an IREE runtime SDK the configure step says to choose runtimeless.
  if(_ARG_EXECUTION_MODEL)
    set(_mode_text "EXECUTION_MODEL ${_ARG_EXECUTION_MODEL}" PARENT_SCOPE)
  else()
    set(_mode_text "EXECUTION_MODEL async (the default)" PARENT_SCOPE)
  endif()
  # VERIFY (default ON): emit runs the generated code against async before
  # writing it, and the build fails if any output differs.  STRICT: it also
  # fails when a function's outputs never moved across the inputs tried
  # (verification proved nothing; otherwise a warning in the build output).
  if(DEFINED _ARG_VERIFY)
    if(_ARG_VERIFY MATCHES "^(STRICT|strict)$")
      set(_ARG_VERIFY STRICT PARENT_SCOPE)
    elseif(NOT _ARG_VERIFY MATCHES "^(ON|OFF|TRUE|FALSE|YES|NO|1|0|on|off|true|false|yes|no)$")
      message(FATAL_ERROR "ireegen_add_model(${target}): VERIFY ${_ARG_VERIFY}: expected ON, OFF or STRICT")
    elseif(_ARG_VERIFY)
      set(_ARG_VERIFY ON PARENT_SCOPE)
    else()
      set(_ARG_VERIFY OFF PARENT_SCOPE)
    endif()
  endif()
  # MAX_DETECTIONS <n>: the rows of a detector's NonMaxSuppression output
  # (docs/detectors.md), a whole number from 1 to 65536 as emit takes it.
  if(DEFINED _ARG_MAX_DETECTIONS)
    if(NOT _ARG_MAX_DETECTIONS MATCHES "^[1-9][0-9]?[0-9]?[0-9]?[0-9]?$" OR _ARG_MAX_DETECTIONS GREATER 65536)
      message(FATAL_ERROR "ireegen_add_model(${target}): MAX_DETECTIONS ${_ARG_MAX_DETECTIONS}: expected a whole "
        "number of detections from 1 to 65536")
    endif()
  endif()
  # VERIFY_INPUTS <x.npz>: verify on these inputs (a dependency) instead of drawn ones.
  set(_verify_inputs "")
  if(_ARG_VERIFY_INPUTS)
    get_filename_component(_verify_inputs "${_ARG_VERIFY_INPUTS}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${_verify_inputs}")
      message(FATAL_ERROR "ireegen_add_model(${target}): VERIFY_INPUTS ${_verify_inputs} does not exist")
    endif()
    set(_ARG_VERIFY_INPUTS "${_verify_inputs}" PARENT_SCOPE)
  endif()
  set(_verify_inputs "${_verify_inputs}" PARENT_SCOPE)
  if(_ARG_DATA_FORMAT STREQUAL "asm" AND CMAKE_C_COMPILER_FRONTEND_VARIANT STREQUAL "MSVC")
    message(FATAL_ERROR "ireegen_add_model(${target}): DATA_FORMAT asm needs a GNU-style assembler (.S with "
      ".incbin), which the MSVC-style compiler ${CMAKE_C_COMPILER_ID} has not; use DATA_FORMAT c")
  endif()
  # KERNELS <spec.json>: your own C kernels (docs/kernels.md). `resolve`
  # checks the spec and lists its files (KERNEL_FILES), which the step
  # depends on; the spec itself re-configures when it changes.
  if(_ARG_KERNELS)
    get_filename_component(_kernels "${_ARG_KERNELS}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${_kernels}" OR IS_DIRECTORY "${_kernels}")
      message(FATAL_ERROR "ireegen_add_model(${target}): KERNELS ${_kernels} is not a file")
    endif()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_kernels}")
    set(_ARG_KERNELS "${_kernels}" PARENT_SCOPE)
  endif()
endfunction()

# What an argument left out means: NAME is the target's name, EXECUTION_MODEL
# async, OUTPUT_DIR ireegen/<target> in the current binary directory (set,
# absolute, as _outdir), DATA_FORMAT the compiler's, and TARGET_TRIPLE and
# TARGET_CPU the toolchain's.
function(_ireegen_default_arguments target)
  if(NOT _ARG_NAME)
    set(_ARG_NAME "${target}" PARENT_SCOPE)
  endif()
  if(NOT _ARG_EXECUTION_MODEL)
    set(_ARG_EXECUTION_MODEL async)
    set(_ARG_EXECUTION_MODEL async PARENT_SCOPE)
  endif()
  if(NOT _ARG_OUTPUT_DIR)
    set(_ARG_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/ireegen/${target}")
  endif()
  get_filename_component(_outdir "${_ARG_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  set(_outdir "${_outdir}" PARENT_SCOPE)
  if(NOT _ARG_DATA_FORMAT AND NOT _ARG_MODULE_FORMAT STREQUAL "emitc")
    _ireegen_default_data_format(_data_format)
    set(_ARG_DATA_FORMAT "${_data_format}" PARENT_SCOPE)
  endif()
  if(NOT _ARG_TARGET_TRIPLE AND NOT _ARG_EXECUTABLE_FORMAT STREQUAL "vmvx"
     AND NOT _ARG_EXECUTION_MODEL STREQUAL "inline-static")
    _ireegen_default_triple(_triple)
    set(_ARG_TARGET_TRIPLE "${_triple}" PARENT_SCOPE)
    if(NOT _ARG_TARGET_CPU AND IREEGEN_TARGET_CPU AND _triple STREQUAL IREEGEN_TARGET_TRIPLE)
      set(_ARG_TARGET_CPU "${IREEGEN_TARGET_CPU}" PARENT_SCOPE)
    endif()
  endif()
endfunction()

# Appends flag and value to the list `list_var`: one argument when the flag
# ends in `=`, two otherwise.
function(_ireegen_append_flag list_var flag value)
  if(flag MATCHES "=$")
    list(APPEND ${list_var} "${flag}${value}")
  else()
    list(APPEND ${list_var} ${flag} "${value}")
  endif()
  set(${list_var} "${${list_var}}" PARENT_SCOPE)
endfunction()

# Sets out_var to emit's flags from the table named `table` (the rules are at
# the tables, above).
function(_ireegen_flags table out_var)
  set(_flags "")
  set(_rows "${${table}}")
  while(_rows)
    list(POP_FRONT _rows _name _flag)
    if(_name MATCHES "^([A-Z_]+)=(.*)$")
      if("${_ARG_${CMAKE_MATCH_1}}" STREQUAL "${CMAKE_MATCH_2}")
        list(APPEND _flags ${_flag})
      endif()
      continue()
    endif()
    if(_name IN_LIST _IREEGEN_LIST_KEYWORDS)
      foreach(_value IN LISTS _ARG_${_name})
        _ireegen_append_flag(_flags ${_flag} "${_value}")
      endforeach()
    elseif(_name MATCHES "^IREEGEN_")
      if(${_name})
        _ireegen_append_flag(_flags ${_flag} "${${_name}}")
      endif()
    elseif(_ARG_${_name} OR (DEFINED _ARG_${_name} AND _name IN_LIST _IREEGEN_GIVEN_KEYWORDS))
      _ireegen_append_flag(_flags ${_flag} "${_ARG_${_name}}")
    endif()
  endwhile()
  set(${out_var} "${_flags}" PARENT_SCOPE)
endfunction()

# `ireegen resolve`: the options checked with the same tables emit uses, and
# the outputs learnt now.  The answer is data, read line by line; nothing of
# it is evaluated as CMake code (paths and external-data names come from
# outside).  The format is in ireegen/cmake_resolve.py.  Sets, in the caller,
# _IREEGEN_<KEY> for each KEY of the answer.
function(_ireegen_resolve target args)
  set(_resolved_file "${CMAKE_CURRENT_BINARY_DIR}/ireegen/${target}.resolved")
  file(MAKE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/ireegen")
  execute_process(
    COMMAND "${IREEGEN_PYTHON_EXECUTABLE}" -m ireegen resolve --name "${_ARG_NAME}" -o "${_outdir}" --src "${_src}" ${args}
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
  set(_keys "")
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
      list(APPEND _keys "${CMAKE_MATCH_1}")
    elseif(_key MATCHES "^[A-Z_]+$")
      set("_IREEGEN_${_key}" "${_value}")
      list(APPEND _keys "${_key}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _keys)
  foreach(_key IN LISTS _keys)
    set("_IREEGEN_${_key}" "${_IREEGEN_${_key}}" PARENT_SCOPE)
  endforeach()
  if(_src MATCHES "\\.onnx$")
    # The .onnx names its external data files: list them again when it changes.
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_src}")
  endif()
endfunction()

# Every option is in this file; it is rewritten only when they change, so
# changing FLAGS or any option re-runs this model (and only this model)
# with Makefiles too, not just with Ninja.  Sets _options_file in the caller.
function(_ireegen_write_options target options)
  set(_options_file "${CMAKE_CURRENT_BINARY_DIR}/ireegen/${target}.options")
  string(REPLACE ";" "\n" _options_text "${_src}\n${_outdir}\n${_ARG_NAME};${options}\ncompiler ${_IREEGEN_COMPILER_VERSION}\n")
  set(_old_options "")
  if(EXISTS "${_options_file}")
    file(READ "${_options_file}" _old_options)
  endif()
  if(NOT _old_options STREQUAL _options_text)
    file(WRITE "${_options_file}" "${_options_text}")
  endif()
  set(_options_file "${_options_file}" PARENT_SCOPE)
endfunction()

# The build step that runs `ireegen emit` with `flags`.
function(_ireegen_add_generate_command flags)
  add_custom_command(
    OUTPUT ${_IREEGEN_OUTPUTS}
    COMMAND "${IREEGEN_PYTHON_EXECUTABLE}" -m ireegen emit "${_src}" -o "${_outdir}" --name "${_ARG_NAME}" ${flags}
    DEPENDS "${_src}" ${_IREEGEN_MODEL_FILES} ${_IREEGEN_KERNEL_FILES} ${_verify_inputs} "${_options_file}" ${_IREEGEN_GENERATOR_FILES} ${_IREEGEN_COMPILER_FILES}
    WORKING_DIRECTORY "${_IREEGEN_CMAKE_DIR}"
    COMMENT "ireegen: generating ${_ARG_NAME} (${_IREEGEN_EXECUTION_MODEL}, ${_IREEGEN_EXECUTABLE_FORMAT}, ${_IREEGEN_MODULE_FORMAT}) from ${_ARG_SRC}"
    VERBATIM)
endfunction()

# GENERATE_ONLY: <target> is the generation step alone, for projects that
# compile the sources with their own rules (and their own IREE runtime); no
# library, no runtime needed here.
function(_ireegen_add_generate_target target)
  add_custom_target(${target} ALL DEPENDS ${_IREEGEN_OUTPUTS})
  set_target_properties(${target} PROPERTIES
    IREEGEN_SOURCES "${_IREEGEN_SOURCES}"
    IREEGEN_OBJECTS "${_IREEGEN_OBJECTS}"
    IREEGEN_RUNTIME_TARGETS "${_IREEGEN_RUNTIME_TARGETS}"
    IREEGEN_DATA_FORMAT "${_IREEGEN_DATA_FORMAT}"
    IREEGEN_DATA_BLOBS "${_IREEGEN_DATA_BLOBS}"
    IREEGEN_OUTPUT_DIR "${_outdir}")
endfunction()

# ireegen_thread_pool: the pthreads parallel-for of cmake/threads/, one
# target for every model of the build.
function(_ireegen_add_thread_pool)
  if(NOT TARGET ireegen_thread_pool)
    find_package(Threads REQUIRED)
    add_library(ireegen_thread_pool STATIC "${_IREEGEN_CMAKE_DIR}/threads/ireegen_thread_pool.c")
    target_include_directories(ireegen_thread_pool PUBLIC "${_IREEGEN_CMAKE_DIR}/threads")
    target_compile_features(ireegen_thread_pool PRIVATE c_std_11)
    target_link_libraries(ireegen_thread_pool PUBLIC Threads::Threads)
  endif()
endfunction()

# The static library <target> of the generated sources, built after the
# generation step <target>_generate; its include directory PUBLIC and the
# runtime targets of its mode linked.  The ASM language, when the sources
# have a .S, is enabled by the caller (_ireegen_enable_asm must run in
# ireegen_add_model()'s own scope).
function(_ireegen_add_library target)
  if(_ARG_PARALLEL_FOR AND NOT _IREEGEN_EXECUTION_MODEL STREQUAL "runtimeless")
    message(FATAL_ERROR "ireegen_add_model(${target}): PARALLEL_FOR is for EXECUTION_MODEL runtimeless; "
      "${_IREEGEN_EXECUTION_MODEL} takes THREADS <n>")
  endif()
  add_custom_target(${target}_generate DEPENDS ${_IREEGEN_OUTPUTS})
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
    _ireegen_require_runtime(${target} "${_mode_text}" "${_IREEGEN_RUNTIME_TARGETS}")
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
  # PARALLEL_FOR: <NAME>_PARALLEL_FOR for the library and its users (the
  # instance's layout depends on it), and the pthreads pool to hand to
  # <name>_set_parallel_for() (docs/runtimeless.md#threads).
  if(_ARG_PARALLEL_FOR)
    _ireegen_add_thread_pool()
    target_compile_definitions(${target} PUBLIC "${_macro}_PARALLEL_FOR")
    target_link_libraries(${target} PUBLIC ireegen_thread_pool)
  endif()
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

# Makefile generators write the build step's inputs and outputs into Make
# rules and CMakeFiles/Makefile.cmake without escaping ':' (Make's rule
# separator) or '"' (CMake's quote): such a path is refused at configure
# in one line; Ninja carries it.
function(_ireegen_check_make_paths target)
  if(NOT CMAKE_GENERATOR MATCHES "Makefiles")
    return()
  endif()
  foreach(_path IN LISTS _src _IREEGEN_MODEL_FILES _IREEGEN_KERNEL_FILES _verify_inputs _outdir)
    if(_path MATCHES "[:\"]")
      message(FATAL_ERROR "ireegen_add_model(${target}): ${_path}: ${CMAKE_GENERATOR} cannot carry ':' or '\"' "
        "in a path (CMake writes it into Make rules unescaped); move or rename it, or use -G Ninja")
    endif()
  endforeach()
endfunction()

function(ireegen_add_model target)
  cmake_parse_arguments(PARSE_ARGV 1 _ARG
    "${_IREEGEN_OPTION_KEYWORDS}" "${_IREEGEN_VALUE_KEYWORDS}" "${_IREEGEN_LIST_KEYWORDS}")
  _ireegen_check_arguments(${target})
  _ireegen_default_arguments(${target})
  _ireegen_flags(_IREEGEN_OUTPUT_FLAGS _args)
  _ireegen_flags(_IREEGEN_EMIT_ONLY_FLAGS _emit_only_args)
  _ireegen_flags(_IREEGEN_CACHE_FLAGS _cache_args)
  _ireegen_resolve(${target} "${_args}")
  _ireegen_check_make_paths(${target})
  _ireegen_write_options(${target} "${_args};${_emit_only_args}")
  _ireegen_add_generate_command("${_args};${_emit_only_args};${_cache_args}")
  if(_ARG_GENERATE_ONLY)
    _ireegen_add_generate_target(${target})
  else()
    if(_IREEGEN_ASM_SOURCES)
      _ireegen_enable_asm()
    endif()
    _ireegen_add_library(${target})
  endif()
endfunction()
