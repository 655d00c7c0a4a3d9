/* The plan of posix_fallocate's fallback (fa-fill.c): how to go about a
   call before anything is written, and whether a descriptor of our own
   must do it (fa-own.c says when one is needed).

   Past RLIMIT_FSIZE: SIGXFSZ and EFBIG before any write, as from the
   kernel.

   A request larger than the free space fails with ENOSPC before any
   write, but one of at most 1 MiB, all past the end of file, may
   instead meet it in its one write (fa-file.c, statfs_of), undone as any
   failure (fa-fill.c).

   Nothing is written here; what is counted was before anything changed,
   and the call forgets it before it writes (fa-fill.c, run).  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>
#include "fa-fill.h"

/* O_LARGEFILE as the kernel sets it and F_GETFL reports it.  x86_64's
   C library calls it 0 (the kernel sets it on every descriptor a 64-bit
   program opens), but fallocate-supervise, an x86_64 program, also
   answers i386 programs, whose descriptors may lack it: the kernel's
   value, i386's and x86_64's alike.  */
#ifdef __x86_64__
# define FA_O_LARGEFILE 0100000
#else
# define FA_O_LARGEFILE O_LARGEFILE
#endif

/* The bytes in holes of [FL->off, LIM), into N; where they cannot be
   found, all of them.  */
struct count
{
  struct fill *fl;
  int64_t lim, n;
};

static int
count_holes (void *arg)
{
  struct count *c = arg;

  c->n = 0;
  return __fa_holes (c->fl, c->fl->off, c->lim, &c->n);
}

/* Past RLIMIT_FSIZE, as the kernel says it: SIGXFSZ and EFBIG (but
   ETXTBSY for an active swap file, which the kernel checks first).  */
static int
too_large (struct fill *fl)
{
  if (__fa_busy (&fl->f, EFBIG) == ETXTBSY)
    return ETXTBSY;
  raise (SIGXFSZ);
  return EFBIG;
}

/* The free space F->fs counts, in bytes: f_bavail, for root too; a
   filesystem that counts no blocks at all (memfd's internal tmpfs, a
   tmpfs mounted without a size) has none to check, UINT64_MAX.  The
   blocks ext2, ext3 and ext4 reserve for root are not counted: who may
   use them is the kernel's to say (CAP_SYS_RESOURCE in the first user
   namespace, the reserve's user or group: root in a user namespace may
   not), and f_bfree also counts ext4's own reserve, which nobody may
   use, and on btrfs space that data cannot use.  Root's request between
   f_bavail and f_bfree wrote 180 MiB (btrfs) or 220 MiB (ext4) before
   its ENOSPC (t-review btrfs root, ext4 root); now it gets ENOSPC
   before writing, even where the kernel would let root have the
   reserve.  */
static uint64_t
free_space (const struct fa_file *f)
{
  if (f->fs.f_blocks == 0)
    return UINT64_MAX;
  return (uint64_t) f->fs.f_bavail
	 * (uint64_t) (f->fs.f_frsize ? f->fs.f_frsize : f->fs.f_bsize);
}

/* How to go about it, before anything is written: the step, which ways
   work, EFBIG, and ENOSPC if the holes and the new space would not fit.  */
int
__fa_plan (struct fill *fl)
{
  struct fa_file *f = &fl->f;
  int64_t lim = fl->end < fl->size0 ? fl->end : fl->size0;
  int64_t from = fl->off > fl->size0 ? fl->off : fl->size0;
  int64_t tail = fl->end > from ? fl->end - from : 0;
  int64_t inside = lim > fl->off ? lim - fl->off : 0;
  uint64_t room;
  int err;

  /* The step must not exceed the filesystem's block, or blocks would be
     skipped; 4096 (a page) is glibc's cap too.  */
  fl->bs = 4096;
  if (f->fs.f_bsize >= 512 && f->fs.f_bsize < 4096)
    fl->bs = (int64_t) f->fs.f_bsize;
  if ((err = __fa_too_big (&fl->f, fl->end)))
    return err;
  fl->map = __fa_mappable (fl);
  /* Past RLIMIT_FSIZE the kernel sends SIGXFSZ and says EFBIG before it
     changes anything; our writes would get there only after growing the
     file to the limit, and SIGXFSZ kills, so no undo would run (nor can
     one on an append-only file).  __fa_grow's one write is the kernel's
     check itself; an O_APPEND descriptor's way is not known yet.  */
  if (fl->end > fl->size0 && (!fl->map || (f->flags & O_APPEND))
      && fl->end > __fa_limit (fl))
    return too_large (fl);
  room = free_space (f);
  /* The holes inside the file, at most all of the range there; counted
     only where the count decides: by FIEMAP, on tmpfs by lseek on a
     descriptor of our own (else a file of data near a full tmpfs got
     ENOSPC), and elsewhere all of it counts (st_blocks cannot bound
     them: see __fa_solid, fa-holes.c).  */
  if ((uint64_t) (inside + tail) > room
      && (__fa_holes_known (&fl->f) || f->fs.f_type == FA_TMPFS))
    {
      struct count c = { fl, lim, 0 };

      if (__fa_holes_known (&fl->f))
	{
	  if ((err = count_holes (&c)))
	    return err;
	  inside = c.n;
	}
      else if (__fa_own (f, count_holes, &c) == 0)
	inside = c.n;
    }
  /* Space a filesystem frees in the background is not counted yet (xfs
     inactivates a deleted file in a worker: 4 of 5 calls right after a
     delete got ENOSPC where the kernel's fallocate, which waits for it,
     got 0): once more after syncfs, which lets xfs finish (measured).  */
  if ((uint64_t) (inside + tail) > room && syncfs (f->fd) == 0
      && fstatfs64 (f->fd, &f->fs) == 0)
    room = free_space (f);
  /* Before ENOSPC, the limit that __fa_grow's write would have met first.  */
  if ((uint64_t) (inside + tail) > room)
    return fl->end > fl->size0 && fl->end > __fa_limit (fl) ? too_large (fl)
	   : ENOSPC;
  return 0;
}

/* Whether the caller's descriptor cannot do what this call needs, and
   one of our own must (see the top of fa-own.c).  */
int
__fa_needs_own (struct fill *fl)
{
  const struct fa_file *f = &fl->f;
  int64_t lim = fl->end < fl->size0 ? fl->end : fl->size0, n = 0;
  int past = fl->end > fl->size0;

  if ((f->flags & O_DIRECT) && past)
    return 1;
  if (!(f->flags & FA_O_LARGEFILE) && fl->end > INT32_MAX)
    return 1;
  /* An append lands wherever the file ends by then: two processes
     appending at once would each add their part.  Past the end of file
     we write at exact offsets, as through any other descriptor.  */
  if ((f->flags & O_APPEND) && past)
    return 1;
  if (fl->map || lim <= fl->off
      || !((f->flags & O_APPEND) || (f->flags & O_ACCMODE) != O_RDWR))
    return 0;
  /* Holes inside the file, which an append cannot reach, and which an
     O_WRONLY descriptor cannot map: ours can, race-free.  */
  return !__fa_holes_known (&fl->f) || __fa_holes (fl, fl->off, lim, &n)
	 || n > 0;
}
