/* ABIs with 64-bit registers (and ILP32 ABIs on 64-bit registers such as
   x32 and mips n32): fallocate (fd, mode, offset, len) takes four words,
   one per argument.  */
#ifndef FA_WORDS64_H
#define FA_WORDS64_H

#include <stdint.h>

typedef int64_t fa_word;
#define FA_NWORDS 4

static inline void
fa_words (fa_word w[FA_NWORDS], int fd, int mode, int64_t offset, int64_t len)
{
  w[0] = fd;
  w[1] = mode;
  w[2] = offset;
  w[3] = len;
}

#endif
