/* fallocate modes done by writing, for fallocate-shim's emulate policy:
   a call that the filesystem (EOPNOTSUPP) or the kernel or a sandbox
   (ENOSYS) refused gets the visible result it asked for, the contents and
   the size of the file, where writing can give it:

   - 0: allocated by the fallback of posix_fallocate (fa-fill.c);
   - KEEP_SIZE: the part within the file allocated so; space past the end
     of file cannot be reserved without the system call, and is not;
   - PUNCH_HOLE | KEEP_SIZE: the data in the range overwritten with zeros,
     holes left as they are; no space is freed;
   - ZERO_RANGE, with or without KEEP_SIZE, and WRITE_ZEROES: zeros
     written over the range within the file, then, without KEEP_SIZE, the
     part past the end of file allocated as by mode 0.

   Zeroing is what these modes ask, so, unlike the fallback, it writes
   over data, inside the range only.  COLLAPSE_RANGE, INSERT_RANGE (data
   would have to move, and a failure part way would lose it),
   UNSHARE_RANGE, and every combination the kernel itself refuses keep the
   refusal.  A failure part way (ENOSPC, EIO) leaves part of the range
   zeroed.  A file truncated by someone else while we zero it is extended
   again by our writes.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fallocate.h>
#include "fa-file.h"

#define STEP (1 << 30)

struct zero
{
  struct fa_file *f;
  int64_t off, lim;
  int punch;
};

/* Zeros over [OFF, LIM), inside the file; PUNCH: over its data only
   (where holes can be found; elsewhere over all of it, which reads the
   same).  -1 if the descriptor cannot write there: an O_APPEND one
   appends, an O_DIRECT one refuses unaligned writes.  */
static int
zero (void *arg)
{
  struct zero *z = arg;
  int64_t off = z->off;
  int err = 0;

  if (z->f->flags & (O_APPEND | O_DIRECT))
    return -1;
  while (!err && off < z->lim)
    {
      int64_t h = off, d = z->lim;
      size_t done;

      /* Zeros go up to the next hole, or to LIM.  */
      if (!z->punch || __fa_next_hole (z->f, &h, &d) != 1)
	h = d = z->lim;
      if (h == off)
	{
	  off = d;
	  continue;
	}
      /* In pieces a 32-bit size_t can hold.  */
      size_t n = h - off > STEP ? STEP : (size_t) (h - off);
      err = __fa_write_zeros (z->f, off, n, &done);
      off += (int64_t) n;
    }
  return err;
}

int
__fa_emulate (int fd, int mode, int64_t off, int64_t len, int refused)
{
  int keep = mode & FALLOC_FL_KEEP_SIZE, op = mode & ~FALLOC_FL_KEEP_SIZE;
  int flags = fcntl (fd, F_GETFL), err;
  int64_t end, lim, from;
  struct fa_file f;
  struct stat64 st;

  /* In the kernel's order: the descriptor, the values, the mode.  */
  if (flags < 0 || (flags & O_PATH))
    return EBADF;
  if (off < 0 || len <= 0)
    return EINVAL;
  if (!(op == FALLOC_FL_ALLOCATE_RANGE || op == FALLOC_FL_ZERO_RANGE
	|| (op == FALLOC_FL_PUNCH_HOLE && keep)
	|| (op == FALLOC_FL_WRITE_ZEROES && !keep)))
    return refused;
  /* What the kernel refused on a block device (which has no size to
     extend, and no holes) stays refused.  */
  if (fstat64 (fd, &st) == 0 && S_ISBLK (st.st_mode))
    return refused;
  if (mode == FALLOC_FL_ALLOCATE_RANGE)
    return __fa_fill (fd, off, len);
  if ((err = __fa_check (fd, mode, off, len, &f)))
    return err;
  end = off + len;
  lim = end < f.st.st_size ? end : f.st.st_size;
  /* Past the end of file the range is new space: allocated from OFF if
     the range starts beyond the end (the gap stays a hole).  */
  from = off > f.st.st_size ? off : f.st.st_size;
  if ((err = __fa_too_big (&f, end)))
    return err;
  struct zero z = { &f, off, lim, op == FALLOC_FL_PUNCH_HOLE };
  if (op == FALLOC_FL_ALLOCATE_RANGE)
    err = off < lim ? __fa_fill (fd, off, lim - off) : 0;
  /* Through a descriptor of our own where the caller's cannot write
     inside the file, or holes are to be left alone and only lseek on
     one of ours finds them.  */
  else if (off < lim
	   && (err = (flags & (O_APPEND | O_DIRECT)) || (z.punch && !__fa_holes_known (&f))
		     ? __fa_own (&f, zero, &z) : zero (&z)) < 0)
    err = refused;
  else if (!err && !keep && end > from)
    err = __fa_fill (fd, from, end - from);
  if (!err)
    err = __fa_sync (&f);
  /* The descriptor passed the checks: EBADF now means the fallback's own
     limit (an O_APPEND one that cannot be reopened can only extend), and
     the mode could not be emulated.  */
  return err == EBADF ? refused : err;
}
