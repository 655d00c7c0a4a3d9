/* alpha: fallocate is 480 (arch/alpha/kernel/syscalls/syscall.tbl,
   sys_fallocate).  Number in v0 ($0), one argument per register a0..a3
   ($16..$19), callsys; on error a3 is nonzero and v0 holds the positive
   errno.  The kernel may change every call-clobbered integer register.  */
#define FA_NR_FALLOCATE 480

#include "fa-words64.h"

#ifdef __alpha__
static inline long
fa_trap (long nr, const fa_word w[FA_NWORDS])
{
  register long v0 __asm__ ("$0") = nr;
  register long a0 __asm__ ("$16") = w[0];
  register long a1 __asm__ ("$17") = w[1];
  register long a2 __asm__ ("$18") = w[2];
  register long a3 __asm__ ("$19") = w[3];
  __asm__ volatile ("callsys"
		    : "+r" (v0), "+r" (a0), "+r" (a1), "+r" (a2), "+r" (a3)
		    :
		    : "$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8", "$20",
		      "$21", "$22", "$23", "$24", "$25", "$27", "$28",
		      "memory");
  return a3 ? -v0 : v0;
}
#endif
