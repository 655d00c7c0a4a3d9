/* sparc64: fallocate is 314 (arch/sparc/kernel/syscalls/syscall.tbl,
   sys_fallocate).  Number in g1, one argument per register o0..o3, trap
   0x6d; on error the carry flag (xcc) is set and o0 holds the positive
   errno.  The floating-point registers are call-clobbered in the V9 ABI,
   and fa_trap is only inlined into __fa_syscall, a real function.  */
#define FA_NR_FALLOCATE 314

#include "fa-words64.h"

#if defined __sparc__ && defined __arch64__
static inline long
fa_trap (long nr, const fa_word w[FA_NWORDS])
{
  register long g1 __asm__ ("g1") = nr;
  register long o0 __asm__ ("o0") = w[0];
  register long o1 __asm__ ("o1") = w[1];
  register long o2 __asm__ ("o2") = w[2];
  register long o3 __asm__ ("o3") = w[3];
  __asm__ volatile ("ta 0x6d\n\t"
		    "bcc,pt %%xcc, 1f\n\t"
		    " nop\n\t"
		    "sub %%g0, %%o0, %%o0\n"
		    "1:"
		    : "+r" (o0), "+r" (g1)
		    : "r" (o1), "r" (o2), "r" (o3)
		    : "cc", "memory");
  return o0;
}
#endif
