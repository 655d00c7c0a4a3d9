/* i386: fallocate is 324 (arch/x86/entry/syscalls/syscall_32.tbl); on an
   x86_64 kernel the same entry is sys_ia32_fallocate.  Six words in
   ebx, ecx, edx, esi, edi, ebp, each 64-bit value low word first.  */
#define FA_NR_FALLOCATE 324
#define FA_HIGH_WORD_FIRST 0

/* glibc on this port also has posix_fallocate64@GLIBC_2.2 (32-bit len).  */
#define FA_GLIBC_2_2_POSIX_FALLOCATE64 1

#include "fa-words32.h"

#ifdef __i386__
/* ebp may be the frame pointer, so it cannot be an asm operand: the sixth
   word is pushed while the stack is still ours, then loaded into ebp
   around int $0x80.  */
static inline long
fa_trap (long nr, const fa_word w[FA_NWORDS])
{
  long ret;
  __asm__ volatile ("pushl %7\n\t"
		    "pushl %%ebp\n\t"
		    "movl 4(%%esp), %%ebp\n\t"
		    "int $0x80\n\t"
		    "popl %%ebp\n\t"
		    "addl $4, %%esp"
		    : "=a" (ret)
		    : "a" (nr), "b" (w[0]), "c" (w[1]), "d" (w[2]),
		      "S" (w[3]), "D" (w[4]), "g" (w[5])
		    : "memory");
  return ret;
}
#endif
