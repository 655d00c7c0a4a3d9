/* mips n32 and n64 (one 64-bit register per argument, a0..a3): number in
   v0, syscall; the error flag comes back in a3, with the positive errno
   in v0.  Included by mips/n32/fa-arch.h and mips/n64/fa-arch.h, which
   differ only in the number.  */
#include "fa-words64.h"

#if defined __mips__ && (_MIPS_SIM == _ABIN32 || _MIPS_SIM == _ABI64)
static inline long
fa_trap (long nr, const fa_word w[FA_NWORDS])
{
  register fa_word r4 __asm__ ("$4") = w[0];
  register fa_word r5 __asm__ ("$5") = w[1];
  register fa_word r6 __asm__ ("$6") = w[2];
  register fa_word r7 __asm__ ("$7") = w[3];
  register fa_word r2 __asm__ ("$2");
  __asm__ volatile ("move $2, %2\n\t"
		    "syscall"
		    : "=&r" (r2), "+r" (r7)
		    : "r" ((fa_word) nr), "r" (r4), "r" (r5), "r" (r6)
		    : "$1", "$3", "$8", "$9", "$10", "$11", "$12", "$13",
		      "$14", "$15", "$24", "$25", "hi", "lo", "memory");
  return r7 ? -r2 : r2;
}
#endif
