/* 32-bit ABIs: each 64-bit argument takes two consecutive words, in the
   order the ABI's fa-arch.h states with FA_HIGH_WORD_FIRST (the machine's
   memory order: 0 on little-endian, 1 on big-endian).  fd and mode fill
   the first two slots, so offset starts on an even slot and no ABI needs
   a padding word here.

   Plain C on purpose: a host-run test includes an ABI's fa-arch.h and
   checks these very words without an emulator.  */
#ifndef FA_WORDS32_H
#define FA_WORDS32_H

#include <stdint.h>

#ifndef FA_HIGH_WORD_FIRST
# error "fa-arch.h must define FA_HIGH_WORD_FIRST before including fa-words32.h"
#endif

typedef uint32_t fa_word;
#define FA_NWORDS 6

static inline void
fa_pair (fa_word w[2], int64_t v)
{
  w[!FA_HIGH_WORD_FIRST] = (uint32_t) ((uint64_t) v >> 32);
  w[FA_HIGH_WORD_FIRST] = (uint32_t) v;
}

static inline void
fa_words (fa_word w[FA_NWORDS], int fd, int mode, int64_t offset, int64_t len)
{
  w[0] = (uint32_t) fd;
  w[1] = (uint32_t) mode;
  fa_pair (w + 2, offset);
  fa_pair (w + 4, len);
}

#endif
