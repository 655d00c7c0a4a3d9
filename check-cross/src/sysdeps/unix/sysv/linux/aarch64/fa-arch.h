/* aarch64: fallocate is 47 (include/uapi/asm-generic/unistd.h).  Number
   in x8, one argument per register x0..x3, svc 0.  */
#define FA_NR_FALLOCATE 47

#include "fa-words64.h"

#ifdef __aarch64__
static inline long
fa_trap (long nr, const fa_word w[FA_NWORDS])
{
  register long x8 __asm__ ("x8") = nr;
  register long x0 __asm__ ("x0") = w[0];
  register long x1 __asm__ ("x1") = w[1];
  register long x2 __asm__ ("x2") = w[2];
  register long x3 __asm__ ("x3") = w[3];
  __asm__ volatile ("svc 0"
		    : "+r" (x0)
		    : "r" (x8), "r" (x1), "r" (x2), "r" (x3)
		    : "memory");
  return x0;
}
#endif
