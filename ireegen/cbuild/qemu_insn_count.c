// A qemu TCG plugin that counts executed guest instructions and prints
// "instructions N" at exit (to qemu's log: run with -d plugin).  Debian's
// qemu 7.2 supports plugins but ships neither one nor the plugin header, so
// the handful of API-version-1 declarations it uses are written out here.
//   cc -shared -fPIC -O2 qemu_insn_count.c -o libinsn_count.so
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, void (*)(qemu_plugin_id_t, struct qemu_plugin_tb*));
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb*, enum qemu_plugin_op, void*, uint64_t);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb*);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t, void (*)(qemu_plugin_id_t, void*), void*);
void qemu_plugin_outs(const char*);
__attribute__((visibility("default"))) int qemu_plugin_version = 1;
static uint64_t count;
static void on_tb(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &count, qemu_plugin_tb_n_insns(tb));
}
static void at_exit(qemu_plugin_id_t id, void* p) {
  (void)id; (void)p;
  char line[64];
  snprintf(line, sizeof line, "instructions %" PRIu64 "\n", count);
  qemu_plugin_outs(line);
}
__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t* info, int argc, char** argv) {
  (void)info; (void)argc; (void)argv;
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb);
  qemu_plugin_register_atexit_cb(id, at_exit, NULL);
  return 0;
}
