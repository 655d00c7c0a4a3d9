/* m68k: fallocate is 320 (arch/m68k/kernel/syscalls/syscall.tbl,
   sys_fallocate).  Number in d0, words in d1..d5 and a0, trap #0, result
   (0 or -errno) in d0.  Big-endian: each 64-bit value high word first,
   as the C calling convention of the kernel's sys_fallocate reads it.  */
#define FA_NR_FALLOCATE 320
#define FA_HIGH_WORD_FIRST 1

/* glibc on this port also has posix_fallocate64@GLIBC_2.2 (32-bit len).  */
#define FA_GLIBC_2_2_POSIX_FALLOCATE64 1

/* qemu-m68k starts a thread made without CLONE_SETTLS with no thread
   pointer (the kernel gives it the caller's), and its first use of errno
   faults: fa-aside.c's clone is given the caller's, which
   get_thread_area tells.  */
#define FA_CLONE_TLS() ((void *) syscall (SYS_get_thread_area))

#include "fa-words32.h"

#ifdef __m68k__
static inline long
fa_trap (long nr, const fa_word w[FA_NWORDS])
{
  register long d0 __asm__ ("%d0") = nr;
  register long d1 __asm__ ("%d1") = w[0];
  register long d2 __asm__ ("%d2") = w[1];
  register long d3 __asm__ ("%d3") = w[2];
  register long d4 __asm__ ("%d4") = w[3];
  register long d5 __asm__ ("%d5") = w[4];
  register long a0 __asm__ ("%a0") = w[5];
  __asm__ volatile ("trap #0"
		    : "+r" (d0)
		    : "r" (d1), "r" (d2), "r" (d3), "r" (d4), "r" (d5),
		      "r" (a0)
		    : "memory");
  return d0;
}
#endif
