// Minimal Cortex-M startup for the firmware sample: vector table, .data copy,
// .bss clear, FPU enable, main(), and its exit status to the debugger (qemu)
// over Arm semihosting.  Symbols come from firmware.ld.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern uint32_t __stack_top, __data_load, __data_start, __data_end, __bss_start, __bss_end;
extern int main(void);
extern void initialise_monitor_handles(void);  // newlib's semihosting stdio (rdimon)

static __attribute__((noreturn)) void semihosting_exit(int status) {
  // SYS_EXIT_EXTENDED (0x20) with ADP_Stopped_ApplicationExit and the status.
  const uint32_t block[2] = {0x20026u, (uint32_t)status};
  for (;;) {
    register uint32_t r0 __asm__("r0") = 0x20u;
    register const uint32_t* r1 __asm__("r1") = block;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  }
}

void Reset_Handler(void);
void Reset_Handler(void) {
  memcpy(&__data_start, &__data_load, (size_t)((char*)&__data_end - (char*)&__data_start));
  memset(&__bss_start, 0, (size_t)((char*)&__bss_end - (char*)&__bss_start));
#if defined(__ARM_FP)
  *(volatile uint32_t*)0xE000ED88u |= 0xFu << 20;  // CPACR: CP10, CP11 full access
  __asm__ volatile("dsb\n isb" ::: "memory");
#endif
  initialise_monitor_handles();
  int status = main();
  fflush(stdout);
  semihosting_exit(status);
}

static void Fault_Handler(void) {
  // SYS_WRITE0 (0x04): a message straight to the host's console.
  register uint32_t r0 __asm__("r0") = 0x04u;
  register const char* r1 __asm__("r1") = "fault\n";
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  semihosting_exit(70);
}

__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))&__stack_top, Reset_Handler, Fault_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, Fault_Handler, 0, 0, 0, 0, Fault_Handler, Fault_Handler, 0, Fault_Handler, Fault_Handler,
};
