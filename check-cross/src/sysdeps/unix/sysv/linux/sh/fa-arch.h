/* sh (SH-4, little-endian): fallocate is 324 (arch/sh/kernel/syscalls/
   syscall.tbl, the generic sys_fallocate).  Number in r3, words in r4..r7,
   r0, r1; the entry (arch/sh/kernel/entry-common.S, syscall_call) pushes
   r0 and r1 as the C stack arguments, so offset is r6:r7 and len r0:r1,
   each low word first as the little-endian C convention reads them.  Any
   trapa #0x10..#0x1f is a system call; #0x16 says six arguments.  */
#define FA_NR_FALLOCATE 324
#define FA_HIGH_WORD_FIRST 0

/* glibc on this port also has posix_fallocate64@GLIBC_2.2 (32-bit len).  */
#define FA_GLIBC_2_2_POSIX_FALLOCATE64 1

#include "fa-words32.h"

#if defined __sh__ && defined __LITTLE_ENDIAN__
static inline long
fa_trap (long nr, const fa_word w[FA_NWORDS])
{
  register long r3 __asm__ ("r3") = nr;
  register long r4 __asm__ ("r4") = w[0];
  register long r5 __asm__ ("r5") = w[1];
  register long r6 __asm__ ("r6") = w[2];
  register long r7 __asm__ ("r7") = w[3];
  register long r0 __asm__ ("r0") = w[4];
  register long r1 __asm__ ("r1") = w[5];
  __asm__ volatile ("trapa #0x16"
		    : "+r" (r0)
		    : "r" (r3), "r" (r4), "r" (r5), "r" (r6), "r" (r7),
		      "r" (r1)
		    : "memory", "t");
  return r0;
}
#endif
