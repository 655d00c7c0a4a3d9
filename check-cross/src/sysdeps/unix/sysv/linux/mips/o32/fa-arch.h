/* mips o32, either endianness: fallocate is 4000 + 320
   (arch/mips/kernel/syscalls/syscall_o32.tbl).  Number in v0, words 1..4
   in a0..a3, words 5 and 6 on the user stack at 16(sp) and 20(sp), where
   the kernel's entry loads them (arch/mips/kernel/scall32-o32.S).  A
   64-bit argument takes an aligned pair in memory order: offset is a2:a3,
   len the two stack words (sys32_fallocate, merge_64, linux32.c).  The
   error flag comes back in a3, with the positive errno in v0.  */
#define FA_NR_FALLOCATE (4000 + 320)
#ifdef __MIPSEB__
# define FA_HIGH_WORD_FIRST 1
#else
# define FA_HIGH_WORD_FIRST 0
#endif

/* glibc on this port also has posix_fallocate64@GLIBC_2.2 (32-bit len).  */
#define FA_GLIBC_2_2_POSIX_FALLOCATE64 1

#include "fa-words32.h"

#if defined __mips__ && _MIPS_SIM == _ABIO32
static inline long
fa_trap (long nr, const fa_word w[FA_NWORDS])
{
  register long r4 __asm__ ("$4") = w[0];
  register long r5 __asm__ ("$5") = w[1];
  register long r6 __asm__ ("$6") = w[2];
  register long r7 __asm__ ("$7") = w[3];
  register long r2 __asm__ ("$2");
  __asm__ volatile ("subu $sp, $sp, 32\n\t"
		    "sw %3, 16($sp)\n\t"
		    "sw %4, 20($sp)\n\t"
		    "move $2, %2\n\t"
		    "syscall\n\t"
		    "addu $sp, $sp, 32"
		    : "=&r" (r2), "+r" (r7)
		    : "r" (nr), "r" (w[4]), "r" (w[5]), "r" (r4), "r" (r5),
		      "r" (r6)
		    : "$1", "$3", "$8", "$9", "$10", "$11", "$12", "$13",
		      "$14", "$15", "$24", "$25", "hi", "lo", "memory");
  return r7 ? -r2 : r2;
}
#endif
