/* posix_fallocate64@GLIBC_2.2.  The 32-bit glibc ports that existed before
   glibc 2.3.3 first exported posix_fallocate64 with an off_t, 32-bit, len;
   programs linked then still bind that version, and under LD_PRELOAD they
   must find it here, reading the arguments they pass.  libfallocate.map
   makes the 64-bit posix_fallocate64 the default, GLIBC_2.3.3.  Built only
   where the leaf defines FA_GLIBC_2_2_POSIX_FALLOCATE64, and never with
   _FILE_OFFSET_BITS=64, so off_t is 32 bits here.  */
#include <sys/types.h>
#include "fa-internal.h"

int __fa_posix_fallocate64_l32 (int fd, __off64_t offset, off_t len);

int
__fa_posix_fallocate64_l32 (int fd, __off64_t offset, off_t len)
{
  return __fa_posix (fd, offset, len);
}
__asm__ (".symver __fa_posix_fallocate64_l32, posix_fallocate64@GLIBC_2.2");
