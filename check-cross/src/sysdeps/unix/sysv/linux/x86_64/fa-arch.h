/* x86_64: fallocate is 285 (arch/x86/entry/syscalls/syscall_64.tbl).
   One register per argument: rdi, rsi, rdx, r10; rcx and r11 are
   clobbered by the syscall instruction.  */
#define FA_NR_FALLOCATE 285

#include "fa-words64.h"

#ifdef __x86_64__
static inline long
fa_trap (long nr, const fa_word w[FA_NWORDS])
{
  register long r10 __asm__ ("r10") = w[3];
  long ret;
  __asm__ volatile ("syscall"
		    : "=a" (ret)
		    : "a" (nr), "D" (w[0]), "S" (w[1]), "d" (w[2]), "r" (r10)
		    : "rcx", "r11", "memory");
  return ret;
}
#endif
