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

/* Zeros over [OFF, LIM), inside the file, lseek asked through RFD;
   PUNCH: over its data only.  -1 if there is no descriptor to write
   through.  */
static int
zero (int fd, int rfd, int flags, const struct stat64 *st, int solo,
      int64_t off, int64_t lim, int punch)
{
  int wfd = __fa_writer (fd, flags, st, solo), err = 0;
  int64_t d, h;

  if (wfd == fd && (flags & (O_APPEND | O_DIRECT)))
    return -1;
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
  if (!err && wfd != fd)
    err = __fa_sync (fd, flags);
  if (wfd != fd)
    close (wfd);
  return err;
}

int
__fa_emulate (int fd, int mode, int64_t off, int64_t len, int refused)
{
  int keep = mode & FALLOC_FL_KEEP_SIZE, op = mode & ~FALLOC_FL_KEEP_SIZE;
  int flags = fcntl (fd, F_GETFL), solo, rfd, err;
  int64_t end, lim, from, pos;
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
  if ((err = __fa_check (fd, mode, off, len, &flags, &st, &solo)))
    return err;
  end = off + len;
  lim = end < st.st_size ? end : st.st_size;
  /* Past the end of file the range is new space: allocated from OFF if
     the range starts beyond the end (the gap stays a hole).  */
  from = off > st.st_size ? off : st.st_size;
  rfd = __fa_seeker (fd, &st, solo, &pos);
  if (__fa_too_big (rfd, end))
    err = EFBIG;
  else if (op == FALLOC_FL_ALLOCATE_RANGE)
    err = off < lim ? __fa_fill (fd, off, lim - off) : 0;
  else if (off < lim
	   && (err = zero (fd, rfd, flags, &st, solo, off, lim,
			   op == FALLOC_FL_PUNCH_HOLE)) < 0)
    err = refused;
  else if (!err && !keep && end > from)
    err = __fa_fill (fd, from, end - from);
  __fa_unseek (fd, rfd, pos);
  /* The descriptor passed the checks: EBADF now means the fallback's own
     limit (an O_APPEND one that cannot be reopened can only extend), and
     the mode could not be emulated.  */
  return err == EBADF ? refused : err;
}
