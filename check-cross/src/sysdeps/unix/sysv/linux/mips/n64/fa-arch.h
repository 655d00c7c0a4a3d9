/* mips n64: fallocate is 5000 + 279
   (arch/mips/kernel/syscalls/syscall_n64.tbl).  */
#define FA_NR_FALLOCATE (5000 + 279)

#include "../fa-trap-n.h"
