/* arm EABI, little-endian: fallocate is 352 (arch/arm/tools/syscall.tbl).
   Number in r7, words in r0..r5, svc 0.  A 64-bit argument takes an
   aligned register pair, low word first (arch/arm64/kernel/sys32.c,
   aarch32_fallocate); offset starts at r2, so no padding is needed.  */
#define FA_NR_FALLOCATE 352
#define FA_HIGH_WORD_FIRST 0

#include "fa-words32.h"

#ifdef __ARM_EABI__
/* r7 is the frame pointer in Thumb code and cannot always be an asm
   operand: save it in a scratch register around the trap instead.  */
static inline long
fa_trap (long nr, const fa_word w[FA_NWORDS])
{
  register long r0 __asm__ ("r0") = w[0];
  register long r1 __asm__ ("r1") = w[1];
  register long r2 __asm__ ("r2") = w[2];
  register long r3 __asm__ ("r3") = w[3];
  register long r4 __asm__ ("r4") = w[4];
  register long r5 __asm__ ("r5") = w[5];
  long saved;
  __asm__ volatile ("mov %1, r7\n\t"
		    "mov r7, %2\n\t"
		    "svc 0\n\t"
		    "mov r7, %1"
		    : "+r" (r0), "=&r" (saved)
		    : "r" (nr), "r" (r1), "r" (r2), "r" (r3), "r" (r4), "r" (r5)
		    : "memory");
  return r0;
}
#endif
