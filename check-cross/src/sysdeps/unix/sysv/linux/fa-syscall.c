/* The raw fallocate system call.  Generic: everything an ABI knows (its
   number, how 64-bit values become words, how to trap) is in the fa-arch.h
   of the sysdeps leaf configure selected.  */
#include "fa-internal.h"
#include "fa-arch.h"

long
__fa_syscall (int fd, int mode, int64_t offset, int64_t len)
{
  fa_word w[FA_NWORDS];

  fa_words (w, fd, mode, offset, len);
  return fa_trap (FA_NR_FALLOCATE, w);
}
