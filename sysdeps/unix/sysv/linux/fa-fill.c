/* Allocation without the system call, for filesystems (EOPNOTSUPP) and
   kernels or sandboxes (ENOSYS) where fallocate cannot allocate: the
   call itself (__fa_fill), its plan in fa-plan.c, its ways in fa-map.c
   (mapping) and fa-write.c (writing, appending).

   Guarantee: no byte that holds data is changed, except in the windows
   listed below and in fa-map.c and fa-write.c; the caller's file offset
   never moves, and no record lock or lease of the process is dropped
   (fa-file.c says how).

   Calls of ours on the same file take turns (fa-lock.c), so two threads
   allocating the same range leave it exactly as one would; two
   processes too, as far as the size goes: past the end of file we write
   at exact offsets, never append (but to an append-only file).

   Holes are found with FIEMAP where the filesystem has it; elsewhere
   (tmpfs, FUSE, network filesystems) every block of the range is a
   candidate, unless the filesystem cannot have holes (fa-holes.c,
   __fa_solid).  After the writes, the file must reach the range's end,
   or EIO: a FUSE server may accept writes and drop them.  They are
   allocated two ways, mapping (fa-map.c) and writing (fa-write.c); what
   the caller's descriptor cannot write, a descriptor of our own writes
   (fa-own.c).

   Race windows, exactly (tests/progs/t-race measures them; those of
   appending, mapping and writing are listed in fa-map.c and fa-write.c):
   - failure: a writer that writes into the zeros we added, without
     extending the file further, loses that when the truncation undoes our
     extension (one that extends it further keeps the size: we truncate
     only a size that is still ours); so does one that extended the file,
     not as far, between our last look at its size and our extension:
     for calls of more than 1 MiB, the size is looked at again just
     before we extend, a few system calls apart; for smaller ones, the
     look is the call's first (as long as the process is stopped in
     between, a supervisor's filling process too).  And the undo itself
     is two system calls, a look at the size and the truncation: a
     writer that extends the file further in between loses what it
     wrote (nothing in user space truncates only from a given size).
     The same holds for a memfd sealed against writes, grown to the
     range's end by one truncation after a look at its size.
   - truncation by another process during the call (the kernel's
     fallocate holds the inode's lock against it): for a call larger than
     1 MiB where FIEMAP finds holes, the range is looked at again after
     the fill and filled again, twice at most, then EIO; elsewhere (tmpfs,
     FUSE, network filesystems, smaller calls) 0 may come back with a
     hole the truncation made, as from glibc's fallback.

   Failure part way (ENOSPC, EIO, EFBIG): the size we added is truncated
   away again, unless someone else has extended the file further; blocks
   filled inside holes stay allocated and read as zeros, as before (ENOSPC
   before any write: fa-plan.c).

   A memfd sealed against writes (F_SEAL_WRITE) gets 0 within its size
   and its size grown past it, as from the kernel: no write to it can ever
   fail for lack of space; on hugetlbfs EINVAL (fa-file.c).  One sealed
   with F_SEAL_FUTURE_WRITE, which a writable mapping made before can
   still write, gets EPERM (on hugetlbfs EINVAL): neither our writes nor
   a mapping of ours may allocate there (the kernel does).  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fa-fill.h"

/* Where blocks are smaller than a page (1 KiB blocks of ext2, ext4 or
   xfs), a fault allocates all of its page: the part of [*FROM, *TO) in
   the pages at the range's ends that reach outside it is written
   instead, one zero byte per block, after __fa_edges has dropped a
   large clean folio there (a byte written into one dirtied it, and the
   next fault allocated all of it).  Only through the caller's
   descriptor and below RLIMIT_FSIZE, where a write can land: elsewhere
   (O_DIRECT, O_APPEND, the limit below) the part is left to the fault,
   and the rest of its page is allocated with it, up to a page less a
   block outside each end (t-review fsize, lease), not EFBIG or EBADF.
   [*FROM, *TO) becomes what is left to fault.  */
static int
write_ends (struct fill *fl, int64_t *from, int64_t *to)
{
  int64_t page = getpagesize (), size = __fa_fill_size (fl);
  int64_t lo = fl->off % page ? __fa_up (fl->off, page) : fl->off;
  int64_t hi = fl->end < size ? fl->end - fl->end % page : fl->end;
  int64_t a = *from, b = *to, s, e;
  int err;

  if (fl->bs >= page || !__fa_writable (fl) || __fa_edges (fl, a, b, 0) < 0)
    return 0;
  /* The range within a page or two: all of it is ends.  */
  if (lo >= hi)
    lo = hi = b;
  s = a < lo ? (b < lo ? b : lo) : a;
  e = b > hi ? (a > hi ? a : hi) : b;
  if (s > a && s - 1 < __fa_limit (fl))
    {
      if ((err = __fa_write_blocks (fl, a, s)))
	return err;
      *from = s;
    }
  if (b > e && b - 1 < __fa_limit (fl))
    {
      if ((err = __fa_write_blocks (fl, e, b)))
	return err;
      *to = e;
    }
  return 0;
}

/* The hole [from, to), inside the file, allocated.  Where holes cannot
   be found, the first populate is judged by st_blocks: BLOCKS, counted
   just before (-1 elsewhere).  */
static int
fill_hole (struct fill *fl, int64_t from, int64_t to, int64_t blocks)
{
  int err;

  if (fl->map && (err = write_ends (fl, &from, &to)))
    return err;
  if (from >= to)
    return 0;
  if (fl->map && __fa_populate (fl, from, to) == 0)
    {
      if (fl->checked++)
	return 0;
      /* The first hole tells whether the advice allocates.  */
      if (__fa_gone (fl, from, to, blocks))
	return 0;
      /* ext2's page_mkwrite reserves nothing: its blocks come at
	 writeback, which must then happen before we return.  */
      fl->writeback = 1;
      if (__fa_populate (fl, from, to) == 0 && __fa_flush (fl) == 0
	  && __fa_gone (fl, from, to, blocks))
	return 0;
      fl->writeback = 0;
    }
  fl->map = 0;
  return __fa_write_blocks (fl, from, to);
}

/* The holes of [from, to) allocated; with COUNT, only their bytes added
   to *COUNT.  Where holes cannot be found the whole range is one
   candidate.  */
int
__fa_holes (struct fill *fl, int64_t from, int64_t to, int64_t *count)
{
  while (from < to)
    {
      int64_t h = from, d = to, blocks = -1, err;
      int found = __fa_next_hole (&fl->f, &h, &d);
      struct stat64 st;

      if (found < 0 && __fa_holes_known (&fl->f))
	return errno;
      /* A filesystem without holes: writing into a file's blocks would
	 allocate nothing, and only race with its writers (exfat-fuse:
	 t-race lost a byte per 10,000 blocks).  */
      if (found == 0 || (found < 0 && __fa_solid (&fl->f)))
	break;
      if (found < 0 && fstat64 (fl->f.fd, &st) == 0)
	blocks = st.st_blocks;
      if (count)
	*count += d - h;
      else if ((err = fill_hole (fl, h, d, blocks)))
	return (int) err;
      from = d;
    }
  return 0;
}

/* Through a descriptor that appends and cannot map, a hole inside the
   file cannot be reached (fa-write.c): EBADF, said before the append,
   which an append-only file cannot take back.  */
static int
unreachable (struct fill *fl, int64_t lim)
{
  int64_t n = 0;
  int err;

  if (fl->map || lim <= fl->off)
    return 0;
  if ((err = __fa_holes (fl, fl->off, lim, &n)))
    return err;
  return n > 0 ? EBADF : 0;
}

/* FL's range allocated through FL's descriptor.  */
static int
run (struct fill *fl)
{
  struct stat64 now;
  int64_t lim;
  int err;

  /* What __fa_plan counted was before anything changed.  */
  __fa_forget (&fl->f);
  /* A large call's plan, and a descriptor of our own, take a while: the
     size again, just before we extend, so that what another process
     added meanwhile counts as the file's, never as ours to take away on
     failure.  A call of at most 1 MiB costs one system call less.  */
  if (fl->end > fl->size0 && fl->end - fl->off > FA_CHUNK
      && fstat64 (fl->f.fd, &now) == 0 && now.st_size != fl->size0)
    fl->size0 = fl->made = fl->f.st.st_size = now.st_size;
  if (fl->end > fl->size0 && (fl->f.flags & O_APPEND))
    {
      lim = fl->size0;
      if (!(err = unreachable (fl, lim)))
	err = __fa_append (fl);
      /* Another writer extended the file during the call: before or
	 between our appends (made is not END), or between an fstat and
	 the append after it (the file ends past END).  What it left
	 unwritten between the old end and its data is a hole inside the
	 file now, as above.  */
      if (!err && (fl->made != fl->end || fstat64 (fl->f.fd, &now) < 0
		   || now.st_size != fl->end))
	lim = fl->end;
    }
  /* The byte __fa_grow wrote is allocated: a one-byte call at the end of
     file (xfstests generic/438 makes thousands) asks no more.  */
  else if (fl->end > fl->size0 && fl->map)
    err = __fa_grow (fl), lim = fl->made == fl->end ? fl->end - 1 : fl->end;
  else
    {
      err = fl->end > fl->size0
	    ? __fa_extend (fl, fl->off > fl->size0 ? fl->off : fl->size0) : 0;
      lim = fl->end < fl->size0 ? fl->end : fl->size0;
    }
  /* Every write succeeded, yet the file does not reach the end: a FUSE
     server that accepts writes and drops them.  Not asked of local
     filesystems, where another process's truncation meanwhile would make
     it a false alarm.  */
  if (!err && fl->end > fl->size0 && fl->f.kind == FA_REMOTE
      && (fstat64 (fl->f.fd, &now) < 0 || now.st_size < fl->end))
    err = EIO;
  if (!err && fl->map)
    err = __fa_ends_first (fl, lim);
  if (!err)
    err = __fa_holes (fl, fl->off, lim, NULL);
  if (!err && (__fa_flush (fl) < 0 || fl->wberr))
    err = fl->wberr;
  if (!err)
    err = __fa_sync (&fl->f);
  return err;
}

/* run, through a descriptor of our own (__fa_own), which may map.  */
static int
run_own (void *arg)
{
  struct fill *fl = arg;

  fl->map = __fa_mappable (fl);
  return run (fl);
}

static int
fill (struct fill *fl)
{
  struct stat64 now;
  int err;

  fl->edged = 0;
  /* The size now, not the check's: a size another thread set past the
     range's end meanwhile is not to be taken back.  */
  if (__fa_unwritable (&fl->f))
    return fstat64 (fl->f.fd, &now) < 0 ? errno
	   : fl->end > now.st_size && ftruncate64 (fl->f.fd, fl->end) < 0
	   ? errno : 0;
  if ((err = __fa_plan (fl)))
    return err;
  err = __fa_needs_own (fl) ? __fa_own (&fl->f, run_own, fl) : run (fl);
  /* The call's error stands, whether this undoing succeeds or not (the
     ! keeps hardened builds from warning of the ignored result).  */
  if (err && fl->made > fl->size0 && fstat64 (fl->f.fd, &now) == 0
      && now.st_size == fl->made)
    (void) !ftruncate64 (fl->f.fd, fl->size0);
  return err;
}

/* Whether, after a fill that succeeded, the file falls short of the
   range's end or has a hole in it: another process truncated it
   meanwhile, which the kernel's fallocate, holding the inode's lock,
   would have let happen only before or after.  Asked of calls larger
   than a chunk (a smaller one is one write past the end of file, or one
   hole), where FIEMAP finds holes.  FL->f.st the size now.  */
static int
unsettled (struct fill *fl)
{
  int64_t h = fl->off, d = fl->end;

  if (fl->end - fl->off <= FA_CHUNK || fl->f.fiemap <= 0)
    return 0;
  __fa_forget (&fl->f);
  return fstat64 (fl->f.fd, &fl->f.st) == 0
	 && (fl->f.st.st_size < fl->end || __fa_next_hole (&fl->f, &h, &d) > 0);
}

int
__fa_fill (int fd, int64_t off, int64_t len)
{
  /* Field by field: zeroing the whole, FIEMAP's reply buffer (3.6 KiB,
     written before it is read) with it, made a one-byte call at the end
     of file cost a tenth more than glibc's.  __fa_check fills FL.f.  */
  struct fill fl;
  fl.off = off;
  fl.fsize = -1;
  fl.map = fl.checked = fl.writeback = 0;
  fl.p = NULL;
  fl.at = fl.lo = fl.hi = 0;
  fl.wberr = 0;
  int err = __fa_check (fd, 0, off, len, &fl.f);

  if (err)
    return err;
  /* Only now: the check is what rules out an overflow.  */
  fl.end = off + len;
  __fa_lock (&fl.f);
  /* The size under the lock, if another call of ours may have changed
     it since the check.  */
  if (__fa_stale (&fl.f) && fstat64 (fd, &fl.f.st) < 0)
    err = errno;
  else
    {
      fl.size0 = fl.made = fl.f.st.st_size;
      err = fill (&fl);
      /* Filled again, as a new call would, a few times at most; then
	 EIO: the file keeps changing under the call.  */
      for (int again = 0; !err && unsettled (&fl); again++)
	{
	  fl.size0 = fl.made = fl.f.st.st_size;
	  err = again < 2 ? fill (&fl) : EIO;
	}
      err = __fa_busy (&fl.f, err);
    }
  if (fl.p != NULL)
    munmap (fl.p, fl.len);
  __fa_unlock (&fl.f);
  return err;
}
