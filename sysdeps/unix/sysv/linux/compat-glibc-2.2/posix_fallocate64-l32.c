/* posix_fallocate64@GLIBC_2.2.  The 32-bit glibc ports that existed before
   glibc 2.3.3 first exported posix_fallocate64 with a 32-bit len; programs
   linked then still bind that version, and under LD_PRELOAD they must find
   it here, reading the arguments they pass.  libfallocate.map makes the
   64-bit posix_fallocate64 the default, GLIBC_2.3.3.  Built only where the
   leaf defines FA_GLIBC_2_2_POSIX_FALLOCATE64 (one file for every such
   port), never with _FILE_OFFSET_BITS=64.

   len is a size_t, as in glibc's __posix_fallocate64_l32 (sysdeps/unix/
   sysv/linux/posix_fallocate64.c): unsigned, zero-extended to 64 bits, so
   that 0x80000000 allocates 2 GiB as glibc does.  Read as a signed off_t
   it would be -2 GiB, and EINVAL.  */
#include <stddef.h>
#include <sys/types.h>
#include "fa-internal.h"

int __fa_posix_fallocate64_l32 (int fd, __off64_t offset, size_t len);

int
__fa_posix_fallocate64_l32 (int fd, __off64_t offset, size_t len)
{
  return __fa_posix (fd, offset, (int64_t) len);
}
__asm__ (".symver __fa_posix_fallocate64_l32, posix_fallocate64@GLIBC_2.2");
