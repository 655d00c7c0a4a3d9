/* x32: the x86_64 system call with the x32 bit set, 0x40000000 + 285
   (__X32_SYSCALL_BIT, arch/x86/entry/syscalls/syscall_64.tbl "common").
   Registers are 64 bits wide, so each argument takes one whole register
   even though long and pointers are 32 bits here.  */
#define FA_NR_FALLOCATE (0x40000000 + 285)

#include "fa-words64.h"

#ifdef __x86_64__
static inline long
fa_trap (long nr, const fa_word w[FA_NWORDS])
{
  register fa_word r10 __asm__ ("r10") = w[3];
  fa_word ret;
  __asm__ volatile ("syscall"
		    : "=a" (ret)
		    : "a" ((fa_word) nr), "D" (w[0]), "S" (w[1]), "d" (w[2]),
		      "r" (r10)
		    : "rcx", "r11", "memory");
  return ret;
}
#endif
