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
#include "fa-internal.h"

#define STEP (1 << 30)

/* Zeros over [OFF, LIM), inside the file; PUNCH: over its data only.  */
static int
zero (int fd, int flags, const struct stat64 *st, int solo, int64_t off,
      int64_t lim, int punch)
{
  int wfd = fd, rfd = fd, err = 0;
  int64_t pos = -1, d, h;

  /* pwrite on an O_APPEND descriptor appends, and O_DIRECT refuses
     unaligned buffers: write through a descriptor without either.  */
  if ((flags & (O_APPEND | O_DIRECT))
      && (wfd = __fa_reopen (fd, O_WRONLY, st, solo)) < 0)
    return EBADF;
  if (punch)
    rfd = __fa_seeker (fd, st, solo, &pos);
  while (!err && off < lim)
    {
      size_t n;

      d = off;
      h = lim;
      if (punch && (d = lseek64 (rfd, off, SEEK_DATA)) < 0)
	{
	  if (errno != ENXIO)
	    err = errno;
	  break;
	}
      if (punch && (h = lseek64 (rfd, d, SEEK_HOLE)) < 0)
	h = lim;
      if (d >= lim)
	break;
      if (h > lim)
	h = lim;
      /* In pieces a 32-bit size_t can hold.  */
      n = h - d > STEP ? STEP : (size_t) (h - d);
      err = __fa_put_zeros (wfd, d, n);
      off = d + (int64_t) n;
    }
  if (punch)
    __fa_unseek (fd, rfd, pos);
  if (wfd != fd)
    close (wfd);
  return err;
}

int
__fa_emulate (int fd, int mode, int64_t off, int64_t len, int refused)
{
  int keep = mode & FALLOC_FL_KEEP_SIZE, op = mode & ~FALLOC_FL_KEEP_SIZE;
  int flags, solo, err;
  int64_t end, lim, from;
  struct stat64 st;

  /* The kernel's first check, before it looks at the mode.  */
  if (off < 0 || len <= 0)
    return EINVAL;
  /* What can be emulated, among what the kernel accepts at all.  */
  if (!(op == FALLOC_FL_ALLOCATE_RANGE || op == FALLOC_FL_ZERO_RANGE
	|| (op == FALLOC_FL_PUNCH_HOLE && keep)
	|| (op == FALLOC_FL_WRITE_ZEROES && !keep)))
    return refused;
  if (mode == FALLOC_FL_ALLOCATE_RANGE)
    return __fa_fill (fd, off, len);
  if ((err = __fa_check (fd, mode, off, len, &flags, &st, &solo)))
    return err;
  end = off + len;
  lim = end < st.st_size ? end : st.st_size;
  if (op == FALLOC_FL_ALLOCATE_RANGE)
    return off < lim ? __fa_fill (fd, off, lim - off) : 0;
  if (off < lim
      && (err = zero (fd, flags, &st, solo, off, lim,
		      op == FALLOC_FL_PUNCH_HOLE)))
    return err;
  /* Past the end of file the range is new space: allocate it, from OFF
     if the range starts beyond the end (the gap stays a hole).  */
  from = off > st.st_size ? off : st.st_size;
  return !keep && end > from ? __fa_fill (fd, from, end - from) : 0;
}
