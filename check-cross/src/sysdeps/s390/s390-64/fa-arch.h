/* s390x: fallocate is 314 (arch/s390/kernel/syscalls/syscall.tbl,
   sys_fallocate).  Above 255 the number cannot be svc's immediate: it
   goes in r1 with svc 0.  One argument per register r2..r5, result in
   r2.  */
#define FA_NR_FALLOCATE 314

#include "fa-words64.h"

#ifdef __s390x__
static inline long
fa_trap (long nr, const fa_word w[FA_NWORDS])
{
  register long r1 __asm__ ("r1") = nr;
  register long r2 __asm__ ("r2") = w[0];
  register long r3 __asm__ ("r3") = w[1];
  register long r4 __asm__ ("r4") = w[2];
  register long r5 __asm__ ("r5") = w[3];
  __asm__ volatile ("svc 0"
		    : "+d" (r2)
		    : "d" (r1), "d" (r3), "d" (r4), "d" (r5)
		    : "memory");
  return r2;
}
#endif
