/* s390 (31-bit): fallocate is 314 (arch/s390/kernel/syscalls/syscall.tbl);
   on a 64-bit kernel its entry is compat_sys_s390_fallocate (fd, mode,
   offhigh, offlow, lenhigh, lenlow) in arch/s390/kernel/compat_linux.c.
   Number in r1, svc 0, six words in r2..r7, each 64-bit value high word
   first.  The wrapper exists because r7 is no C argument register: the
   generic sys_fallocate would read len's low word from the stack.  */
#define FA_NR_FALLOCATE 314
#define FA_HIGH_WORD_FIRST 1

/* glibc on this port also has posix_fallocate64@GLIBC_2.2 (32-bit len).  */
#define FA_GLIBC_2_2_POSIX_FALLOCATE64 1

#include "fa-words32.h"

#if defined __s390__ && !defined __s390x__
static inline long
fa_trap (long nr, const fa_word w[FA_NWORDS])
{
  register long r1 __asm__ ("r1") = nr;
  register long r2 __asm__ ("r2") = w[0];
  register long r3 __asm__ ("r3") = w[1];
  register long r4 __asm__ ("r4") = w[2];
  register long r5 __asm__ ("r5") = w[3];
  register long r6 __asm__ ("r6") = w[4];
  register long r7 __asm__ ("r7") = w[5];
  __asm__ volatile ("svc 0"
		    : "+d" (r2)
		    : "d" (r1), "d" (r3), "d" (r4), "d" (r5), "d" (r6),
		      "d" (r7)
		    : "memory");
  return r2;
}
#endif
