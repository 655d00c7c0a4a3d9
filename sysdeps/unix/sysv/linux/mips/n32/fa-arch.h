/* mips n32: fallocate is 6000 + 283
   (arch/mips/kernel/syscalls/syscall_n32.tbl).  32-bit pointers, but
   64-bit registers: one register per argument, as on n64.  */
#define FA_NR_FALLOCATE (6000 + 283)

#include "../fa-trap-n.h"
