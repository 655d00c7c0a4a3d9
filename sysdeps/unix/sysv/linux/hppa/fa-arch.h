/* hppa (32-bit): fallocate is 305 (arch/parisc/kernel/syscalls/
   syscall.tbl); its entry is parisc_fallocate (fd, mode, offhi, offlo,
   lenhi, lenlo) in arch/parisc/kernel/sys_parisc.c: high word first.
   Words in r26, r25, r24, r23, r22, r21, the number in r20 (set in the
   delay slot), branch to the gateway page at 0x100(%sr2, %r0); the result,
   0 or -errno, in r28.  The gateway changes r19, the PIC register that
   cannot be declared clobbered: it is kept in r4 across the call.  */
#define FA_NR_FALLOCATE 305
#define FA_HIGH_WORD_FIRST 1

/* The stack grows up: clone is given its lowest address (fa-aside.c).  */
#define FA_STACK_GROWS_UP 1

/* glibc on this port also has posix_fallocate64@GLIBC_2.2 (32-bit len).  */
#define FA_GLIBC_2_2_POSIX_FALLOCATE64 1

#include "fa-words32.h"

#ifdef __hppa__
static inline long
fa_trap (long nr, const fa_word w[FA_NWORDS])
{
  register long r26 __asm__ ("r26") = w[0];
  register long r25 __asm__ ("r25") = w[1];
  register long r24 __asm__ ("r24") = w[2];
  register long r23 __asm__ ("r23") = w[3];
  register long r22 __asm__ ("r22") = w[4];
  register long r21 __asm__ ("r21") = w[5];
  register long r28 __asm__ ("r28");
  __asm__ volatile ("copy %%r19, %%r4\n\t"
		    "ble 0x100(%%sr2, %%r0)\n\t"
		    "copy %7, %%r20\n\t"
		    "copy %%r4, %%r19"
		    : "=r" (r28), "+r" (r26), "+r" (r25), "+r" (r24),
		      "+r" (r23), "+r" (r22), "+r" (r21)
		    : "r" (nr)
		    : "r1", "r2", "r4", "r20", "r29", "r31", "memory");
  return r28;
}
#endif
