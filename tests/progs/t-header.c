/* t-header: <fallocate.h> coexists with <fcntl.h> and <linux/falloc.h> in
   either order (this file includes ours first, t-header2.c last), has the
   kernel's values and the proposal's names, and with _FILE_OFFSET_BITS=64
   redirects to the *64 functions as glibc's headers do.  Built with
   -D_FILE_OFFSET_BITS=64 -D_GNU_SOURCE -D_FALLOCATE_2007_SOURCE -Werror
   (the proposal's names are there only with the last).  */
#include <fallocate.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdio.h>
#include "tcheck.h"

extern void *t_header2_fallocate (void);
extern void *t_header2_posix_fallocate (void);

int
main (void)
{
  static const struct { const char *name; int got, want; } modes[] = {
    { "FALLOC_FL_ALLOCATE_RANGE", FALLOC_FL_ALLOCATE_RANGE, 0x00 },
    { "FALLOC_FL_KEEP_SIZE", FALLOC_FL_KEEP_SIZE, 0x01 },
    { "FALLOC_FL_PUNCH_HOLE", FALLOC_FL_PUNCH_HOLE, 0x02 },
    { "FALLOC_FL_NO_HIDE_STALE", FALLOC_FL_NO_HIDE_STALE, 0x04 },
    { "FALLOC_FL_COLLAPSE_RANGE", FALLOC_FL_COLLAPSE_RANGE, 0x08 },
    { "FALLOC_FL_ZERO_RANGE", FALLOC_FL_ZERO_RANGE, 0x10 },
    { "FALLOC_FL_INSERT_RANGE", FALLOC_FL_INSERT_RANGE, 0x20 },
    { "FALLOC_FL_UNSHARE_RANGE", FALLOC_FL_UNSHARE_RANGE, 0x40 },
    { "FALLOC_FL_WRITE_ZEROES", FALLOC_FL_WRITE_ZEROES, 0x80 },
    { "FA_ALLOCATE", FA_ALLOCATE, 0 },
    { "FA_RESV_SPACE", FA_RESV_SPACE, FALLOC_FL_KEEP_SIZE },
    { "FA_UNRESV_SPACE", FA_UNRESV_SPACE, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE },
    { "FALLOC_ALLOCATE", FALLOC_ALLOCATE, 0 },
    { "FALLOC_RESV_SPACE", FALLOC_RESV_SPACE, FALLOC_FL_KEEP_SIZE },
    { "FALLOC_UNRESV_SPACE", FALLOC_UNRESV_SPACE, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE },
    { "FALLOC_ZERO_SPACE", FALLOC_ZERO_SPACE, FALLOC_FL_ZERO_RANGE },
  };

  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
    t_ok (modes[i].got == modes[i].want, "%s is %#x", modes[i].name, modes[i].want);
#ifdef FA_DEALLOCATE
  t_ok (0, "FA_DEALLOCATE has no Linux equivalent and must not be defined");
#endif
#ifdef FALLOC_MKSWAP
  t_ok (0, "FALLOC_MKSWAP has no Linux equivalent and must not be defined");
#endif
  t_ok ((void *) fallocate == (void *) fallocate64,
	"_FILE_OFFSET_BITS=64: fallocate is fallocate64");
  t_ok ((void *) posix_fallocate == (void *) posix_fallocate64,
	"_FILE_OFFSET_BITS=64: posix_fallocate is posix_fallocate64");
  t_ok (t_header2_fallocate () == (void *) fallocate64
	&& t_header2_posix_fallocate () == (void *) posix_fallocate64,
	"the same with <fallocate.h> included last");
  return t_done ();
}
