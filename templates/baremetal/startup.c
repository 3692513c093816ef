// Startup of the programs ireegen builds for bare-metal Cortex-M boards under
// qemu-system-arm (`ireegen run`, parity, emit's verification): vector table,
// .data/.bss initialisation, FPU enable, then main(argc, argv) with the
// command line and exit status passed over Arm semihosting.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern uint32_t __stack_top;
extern uint32_t __data_load, __data_start, __data_end, __bss_start, __bss_end;

extern int main(int argc, char** argv);
extern void initialise_monitor_handles(void);

// Arm semihosting: operation in r0, parameter block in r1.
static uint32_t semihost(uint32_t operation, const void* parameters) {
  register uint32_t r0 __asm__("r0") = operation;
  register const void* r1 __asm__("r1") = parameters;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

enum { SYS_WRITE0 = 0x04, SYS_GET_CMDLINE = 0x15, SYS_EXIT_EXTENDED = 0x20, ADP_STOPPED_APPLICATION_EXIT = 0x20026 };

static __attribute__((noreturn)) void exit_with(int status) {
  const uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)status};
  for (;;) semihost(SYS_EXIT_EXTENDED, block);
}

// The command line ("program arg...", space-separated) split in place.
static char command_line[1024];
static char* arguments[32];

static int read_arguments(void) {
  struct {
    char* buffer;
    uint32_t size;
  } block = {command_line, sizeof(command_line) - 1};
  if (semihost(SYS_GET_CMDLINE, &block) != 0) return 0;
  command_line[block.size] = '\0';
  int argc = 0;
  for (char* p = strtok(command_line, " "); p && argc < 31; p = strtok(NULL, " ")) arguments[argc++] = p;
  arguments[argc] = NULL;
  return argc;
}

void Reset_Handler(void) {
  memcpy(&__data_start, &__data_load, (size_t)((char*)&__data_end - (char*)&__data_start));
  memset(&__bss_start, 0, (size_t)((char*)&__bss_end - (char*)&__bss_start));
#if defined(__ARM_FP)
  // Full access to CP10 and CP11, the FPU.
  *(volatile uint32_t*)0xE000ED88u |= 0xFu << 20;
  __asm__ volatile("dsb\n isb" ::: "memory");
#endif
  initialise_monitor_handles();
  int argc = read_arguments();
  int status = main(argc, arguments);
  fflush(stdout);
  fflush(stderr);
  exit_with(status);
}

// Straight to the host's console: the C library may be what faulted.
static void Fault_Handler(void) {
  semihost(SYS_WRITE0, "fault: the program crashed (HardFault): code for another core?\n");
  exit_with(70);
}

__attribute__((section(".vectors"), used)) void (*const vector_table[16])(void) = {
    (void (*)(void))&__stack_top, Reset_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, 0, 0, 0, 0, Fault_Handler, Fault_Handler, 0, Fault_Handler, Fault_Handler,
};
