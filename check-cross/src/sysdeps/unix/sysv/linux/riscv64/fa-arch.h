/* riscv64: fallocate is 47 (include/uapi/asm-generic/unistd.h).  Number
   in a7, one argument per register a0..a3, ecall.  */
#define FA_NR_FALLOCATE 47

#include "fa-words64.h"

#if defined __riscv && __riscv_xlen == 64
static inline long
fa_trap (long nr, const fa_word w[FA_NWORDS])
{
  register long a7 __asm__ ("a7") = nr;
  register long a0 __asm__ ("a0") = w[0];
  register long a1 __asm__ ("a1") = w[1];
  register long a2 __asm__ ("a2") = w[2];
  register long a3 __asm__ ("a3") = w[3];
  __asm__ volatile ("ecall"
		    : "+r" (a0)
		    : "r" (a7), "r" (a1), "r" (a2), "r" (a3)
		    : "memory");
  return a0;
}
#endif
