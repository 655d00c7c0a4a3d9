/* powerpc (32-bit): fallocate is 309 (arch/powerpc/kernel/syscalls/
   syscall.tbl, sys_ppc_fallocate and compat_sys_fallocate).  Number in
   r0, words in r3..r8, sc.  A 64-bit argument takes an aligned register
   pair, high word first (merge_64, arch/powerpc/include/asm/syscalls.h);
   offset starts at r5, so no padding is needed.  On error the kernel sets
   cr0.SO and leaves the positive errno in r3.  */
#define FA_NR_FALLOCATE 309
#define FA_HIGH_WORD_FIRST 1

/* glibc on this port also has posix_fallocate64@GLIBC_2.2 (32-bit len).  */
#define FA_GLIBC_2_2_POSIX_FALLOCATE64 1

#include "fa-words32.h"

#if defined __powerpc__ && !defined __powerpc64__
static inline long
fa_trap (long nr, const fa_word w[FA_NWORDS])
{
  register long r0 __asm__ ("r0") = nr;
  register long r3 __asm__ ("r3") = w[0];
  register long r4 __asm__ ("r4") = w[1];
  register long r5 __asm__ ("r5") = w[2];
  register long r6 __asm__ ("r6") = w[3];
  register long r7 __asm__ ("r7") = w[4];
  register long r8 __asm__ ("r8") = w[5];
  __asm__ volatile ("sc\n\t"
		    "bns+ 1f\n\t"
		    "neg %1, %1\n"
		    "1:"
		    : "+r" (r0), "+r" (r3), "+r" (r4), "+r" (r5), "+r" (r6),
		      "+r" (r7), "+r" (r8)
		    :
		    : "r9", "r10", "r11", "r12", "cr0", "ctr", "memory");
  return r3;
}
#endif
