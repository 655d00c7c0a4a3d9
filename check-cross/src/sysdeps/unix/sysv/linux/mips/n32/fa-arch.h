/* mips n32: fallocate is 6000 + 283
   (arch/mips/kernel/syscalls/syscall_n32.tbl).  32-bit pointers, but
   64-bit registers: one register per argument, as on n64.  */
#define FA_NR_FALLOCATE (6000 + 283)

/* glibc on n32 also has posix_fallocate64@GLIBC_2.2, whose len is n32's
   32-bit off_t.  */
#define FA_GLIBC_2_2_POSIX_FALLOCATE64 1

#include "../fa-trap-n.h"
