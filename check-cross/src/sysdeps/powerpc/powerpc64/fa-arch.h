/* powerpc64, big- and little-endian (the system call does not depend on
   ELFv1 or ELFv2): fallocate is 309 (arch/powerpc/kernel/syscalls/
   syscall.tbl, sys_fallocate).  Number in r0, one argument per register
   r3..r6, sc; on error cr0.SO is set and r3 holds the positive errno.  */
#define FA_NR_FALLOCATE 309

#include "fa-words64.h"

#ifdef __powerpc64__
static inline long
fa_trap (long nr, const fa_word w[FA_NWORDS])
{
  register long r0 __asm__ ("r0") = nr;
  register long r3 __asm__ ("r3") = w[0];
  register long r4 __asm__ ("r4") = w[1];
  register long r5 __asm__ ("r5") = w[2];
  register long r6 __asm__ ("r6") = w[3];
  __asm__ volatile ("sc\n\t"
		    "bns+ 1f\n\t"
		    "neg %1, %1\n"
		    "1:"
		    : "+r" (r0), "+r" (r3), "+r" (r4), "+r" (r5), "+r" (r6)
		    :
		    : "r7", "r8", "r9", "r10", "r11", "r12", "cr0", "ctr",
		      "memory");
  return r3;
}
#endif
