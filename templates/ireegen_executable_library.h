// DO NOT EDIT: copied by ireegen from its
// templates/ireegen_executable_library.h.
//
// The part of IREE's executable library ABI that runtimeless C needs, written
// from IREE's public, versioned ABI (runtime/src/iree/hal/local/
// executable_library.h, IREE_HAL_EXECUTABLE_LIBRARY_VERSION_0_6).  The names
// carry an ireegen_ prefix so that this header can live beside IREE's own.
// Only the leading fields of the library table are declared: the ABI appends
// fields at the end within a version, and this code only reads.
#ifndef IREEGEN_EXECUTABLE_LIBRARY_H_
#define IREEGEN_EXECUTABLE_LIBRARY_H_

#include <stddef.h>
#include <stdint.h>

// The library version this header describes; a library reporting another one
// is refused at init.
#define IREEGEN_EXECUTABLE_LIBRARY_VERSION 0x00000006u

// iree_hal_executable_library_header_t
typedef struct ireegen_library_header_t {
  uint32_t version;
  const char* name;
  uint32_t features;
  int32_t sanitizer;  // 0: none
} ireegen_library_header_t;

typedef int (*ireegen_import_fn_t)(void* params, void* context, void* reserved);
typedef int (*ireegen_import_thunk_fn_t)(ireegen_import_fn_t fn, void* params,
                                         void* context, void* reserved);

// iree_hal_executable_environment_v0_t
typedef struct ireegen_environment_t {
  const uint32_t* constants;
  ireegen_import_thunk_fn_t import_thunk;
  const ireegen_import_fn_t* import_funcs;
  const void** import_contexts;
  uint64_t processor_data[8];
} ireegen_environment_t;

// iree_hal_executable_dispatch_state_v0_t
typedef struct ireegen_dispatch_state_t {
  uint32_t workgroup_size_x;
  uint32_t workgroup_size_y;
  uint16_t workgroup_size_z;
  uint16_t constant_count;
  uint32_t workgroup_count_x;
  uint32_t workgroup_count_y;
  uint16_t workgroup_count_z;
  uint8_t max_concurrency;
  uint8_t binding_count;
  const uint32_t* constants;
  void* const* binding_ptrs;
  const size_t* binding_lengths;
} ireegen_dispatch_state_t;

// iree_hal_executable_workgroup_state_v0_t
typedef struct ireegen_workgroup_state_t {
  uint32_t workgroup_id_x;
  uint32_t workgroup_id_y;
  uint16_t workgroup_id_z;
  uint16_t reserved;
  uint32_t processor_id;
  void* local_memory;
  uint32_t local_memory_size;
} ireegen_workgroup_state_t;

// iree_hal_executable_dispatch_v0_t: returns 0 on success.
typedef int (*ireegen_dispatch_fn_t)(
    const ireegen_environment_t* environment,
    const ireegen_dispatch_state_t* dispatch_state,
    const ireegen_workgroup_state_t* workgroup_state);

// iree_hal_executable_dispatch_attrs_v0_t
typedef struct ireegen_dispatch_attrs_t {
  uint64_t flags;
  uint16_t local_memory_pages;  // of 4096 bytes
  uint8_t constant_count;
  uint8_t binding_count;
  uint32_t workgroup_size_x;
  uint32_t workgroup_size_y;
  uint16_t workgroup_size_z;
  uint16_t parameter_count;
  uint64_t reserved[5];
} ireegen_dispatch_attrs_t;

// iree_hal_executable_import_table_v0_t
typedef struct ireegen_import_table_t {
  uint32_t count;
  const char* const* symbols;  // a leading '?' marks an optional import
} ireegen_import_table_t;

// iree_hal_executable_export_table_v0_t
typedef struct ireegen_export_table_t {
  uint32_t count;
  const ireegen_dispatch_fn_t* ptrs;
  const ireegen_dispatch_attrs_t* attrs;  // may be NULL: defaults apply
  const void* const* params;
  const void* occupancy;
  const char* const* names;  // may be NULL
  const char* const* tags;
  const char* const* parameter_names;
  const void* source_locations;
  const void* stage_locations;
} ireegen_export_table_t;

// iree_hal_executable_constant_table_v0_t
typedef struct ireegen_constant_table_t {
  uint32_t count;  // executable constants the host must supply
} ireegen_constant_table_t;

// The leading fields of iree_hal_executable_library_v0_t.
typedef struct ireegen_library_t {
  const ireegen_library_header_t* header;
  ireegen_import_table_t imports;
  ireegen_export_table_t exports;
  ireegen_constant_table_t constants;
} ireegen_library_t;

// iree_hal_executable_library_query_fn_t: the `<executable>_library_query`
// function that the static library object defines.
typedef const ireegen_library_header_t** (*ireegen_library_query_fn_t)(
    uint32_t max_version, const ireegen_environment_t* environment);

#endif  // IREEGEN_EXECUTABLE_LIBRARY_H_
