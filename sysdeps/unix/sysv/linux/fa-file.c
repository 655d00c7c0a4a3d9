/* The descriptor layer of the fallback and the emulation: what they may
   do to the caller's file, and how they learn about it.

   They work through the caller's descriptor alone, and never move its
   file offset:
   - no descriptor of our own is opened: closing one would drop every
     POSIX record lock the process holds on the file, including a lock
     another thread takes while we work (SQLite's), opening one breaks the
     process's own lease, and each shows watchers inotify events;
   - no lseek: the offset belongs to the open file description, which
     other threads and processes share, and a write(2) of theirs made
     while it is moved lands in the wrong place.  Holes are found with the
     FIEMAP ioctl instead, data is read with pread, written with pwrite.

   The convention of every function here and in the files that use them:
   0 or an error number, unless a comment says otherwise.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/futex.h>
#include <fallocate.h>
#include "fa-file.h"

/* <linux/close_range.h>, which C libraries older than Linux 5.9's
   headers lack.  */
#define FA_CLOSE_RANGE_UNSHARE (1U << 1)

/* Counts the calls that have finished (__fa_unlock): one that finds it
   unchanged once it holds its lock knows that no call of ours changed
   the file since its check, and needs no second fstat.  */
static unsigned generation;

/* Linux 6.8: the ID of the file's mount, never reused while the system
   runs, as stx_mnt_id (which glibc 2.36's struct statx does not name:
   byte 144 of the kernel's).  */
#ifndef STATX_MNT_ID_UNIQUE
# define STATX_MNT_ID_UNIQUE 0x4000U
#endif
#define STX_MNT_ID 144

/* A mount's answer to a question asked once per mount, kept in *WORD
   as the mount's unique ID << 1 | the answer: one word, which any
   thread or signal handler reads and writes whole; 0 none.  The answer
   for MNT (0: unknown, never kept), or -1 if not known.  Only where
   8-byte atomics are the processor's own (not mips, powerpc, m68k, sh
   32-bit, whose would call libatomic): elsewhere asked each time.  */
int
__fa_mount_answer (const uint64_t *word, uint64_t mnt)
{
#ifdef __GCC_HAVE_SYNC_COMPARE_AND_SWAP_8
  uint64_t w = __atomic_load_n (word, __ATOMIC_RELAXED);

  return mnt && w >> 1 == mnt ? (int) (w & 1) : -1;
#else
  (void) word, (void) mnt;
  return -1;
#endif
}

void
__fa_mount_keep (uint64_t *word, uint64_t mnt, int answer)
{
#ifdef __GCC_HAVE_SYNC_COMPARE_AND_SWAP_8
  if (mnt)
    __atomic_store_n (word, mnt << 1 | (answer != 0), __ATOMIC_RELAXED);
#else
  (void) word, (void) mnt, (void) answer;
#endif
}

/* The last mount without FS_IOC_GETFLAGS (a FUSE server without
   ioctls: a round trip to it, 20 us, each time).  */
static uint64_t flagless;

/* FD's file into F->st, and its immutable and append-only attributes
   into *ATTR (FS_IMMUTABLE_FL, FS_APPEND_FL): by statx in one system
   call where the filesystem reports them (what vfs_fallocate checks),
   else by fstat and FS_IOC_GETFLAGS.  0, or -1 and errno; F->mnt
   the mount's unique ID, or 0.  */
static int
stat_attr (int fd, struct fa_file *f, int *attr)
{
  f->mnt = 0;
#ifdef STATX_ATTR_IMMUTABLE
  const uint64_t both = STATX_ATTR_IMMUTABLE | STATX_ATTR_APPEND;
  struct statx x;

  if (statx (fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_MNT_ID_UNIQUE,
	     &x) == 0)
    {
      if (x.stx_mask & STATX_MNT_ID_UNIQUE)
	memcpy (&f->mnt, (const char *) &x + STX_MNT_ID, sizeof f->mnt);
      memset (&f->st, 0, sizeof f->st);
      f->st.st_dev = makedev (x.stx_dev_major, x.stx_dev_minor);
      f->st.st_ino = x.stx_ino;
      f->st.st_mode = x.stx_mode;
      f->st.st_nlink = x.stx_nlink;
      f->st.st_size = (off64_t) x.stx_size;
      f->st.st_blocks = (blkcnt64_t) x.stx_blocks;
      *attr = (x.stx_attributes & STATX_ATTR_IMMUTABLE ? FS_IMMUTABLE_FL : 0)
	      | (x.stx_attributes & STATX_ATTR_APPEND ? FS_APPEND_FL : 0);
      if ((x.stx_attributes_mask & both) == both)
	return 0;
    }
  else if (errno != ENOSYS || fstat64 (fd, &f->st) < 0)
    return -1;
#else
  if (fstat64 (fd, &f->st) < 0)
    return -1;
#endif
  if (__fa_mount_answer (&flagless, f->mnt) == 1)
    *attr = 0;
  else if (ioctl (fd, FS_IOC_GETFLAGS, attr) < 0)
    {
      *attr = 0;
      if (errno == ENOTTY || errno == ENOSYS || errno == EOPNOTSUPP)
	__fa_mount_keep (&flagless, f->mnt, 1);
    }
  return 0;
}

/* F's filesystem's statfs into F->fs.  A call that writes at most one
   chunk, all past the end of file (xfstests generic/438's one-byte
   calls), needs only the type and block size, which stay those of a
   local filesystem as long as it is mounted: where this thread's last
   call asked the same mount, by an ID never reused (STATX_MNT_ID_UNIQUE),
   they are taken from it, a system call saved.  f_blocks 0 then says
   that no free space is known (fa-fill.c's plan checks none: the one
   write is the check, and its failure is undone as any).  A remote
   filesystem is asked each time (a FUSE server may change its block
   size).  Per thread; a signal handler's call between the reads is
   seen in the ID read again, and one between the writes leaves it alone
   (BUSY), as it would be overwritten only in part.  */
static int
statfs_of (struct fa_file *f, int64_t off, int64_t len)
{
  static __thread struct
  {
    uint64_t mnt;
    unsigned long type;
    long bsize;
    int busy;
  } last;

  if (f->mnt && off >= f->st.st_size && len <= FA_CHUNK
      && last.mnt == f->mnt)
    {
      unsigned long type = last.type;
      long bsize = last.bsize;

      __atomic_signal_fence (__ATOMIC_SEQ_CST);
      if (last.mnt == f->mnt)
	{
	  memset (&f->fs, 0, sizeof f->fs);
	  f->fs.f_type = type;
	  f->fs.f_bsize = bsize;
	  return 0;
	}
    }
  if (fstatfs64 (f->fd, &f->fs) < 0)
    return errno;
  if (f->mnt && !__fa_remote (f->fs.f_type) && !last.busy)
    {
      last.busy = 1;
      __atomic_signal_fence (__ATOMIC_SEQ_CST);
      last.mnt = 0;
      __atomic_signal_fence (__ATOMIC_SEQ_CST);
      last.type = (unsigned long) f->fs.f_type;
      last.bsize = (long) f->fs.f_bsize;
      __atomic_signal_fence (__ATOMIC_SEQ_CST);
      last.mnt = f->mnt;
      __atomic_signal_fence (__ATOMIC_SEQ_CST);
      last.busy = 0;
    }
  return 0;
}

/* Filesystems whose pages go to another machine, by statfs f_type: a
   network one writes whole dirty pages back, and the zeros of a page read
   at fault time would overwrite what another client has since written.  */
int
__fa_remote (unsigned long type)
{
  switch (type & 0xffffffffUL)
    {
    case 0x6969:		/* NFS */
    case 0x517b: case 0xff534d42: case 0xfe534d42:	/* SMB, CIFS, SMB2 */
    case 0x65735546:		/* FUSE */
    case 0x00c36400:		/* Ceph */
    case 0x01021997:		/* 9P */
    case 0x6b414653: case 0x5346414f:	/* kAFS, OpenAFS */
    case 0x0bd00bd0:		/* Lustre */
    case 0x20030528:		/* OrangeFS */
    case 0x73757245:		/* Coda */
      return 1;
    }
  return 0;
}

/* The checks of vfs_fallocate, in its order, so that a call gets the same
   answer whether the kernel or this file decides.  A directory cannot be
   open for writing, so EISDIR cannot arise here; block devices (fixed
   size) and all other files get ENODEV, as with glibc.  MODE is one that
   the kernel accepts.  Fills F.  */
int
__fa_check (int fd, int mode, int64_t off, int64_t len, struct fa_file *f)
{
  int attr;

  f->fd = fd;
  f->seek = -1;
  f->own = 0;
  f->fiemap = -1;
  __fa_forget (f);
  f->gen = __atomic_load_n (&generation, __ATOMIC_ACQUIRE);
  f->flags = fcntl (fd, F_GETFL);
  if (f->flags < 0 || (f->flags & O_PATH))
    return EBADF;
  if (off < 0 || len <= 0)
    return EINVAL;
  /* Access mode 3 reads and writes nothing (FMODE_WRITE is not set).  */
  if (((f->flags & O_ACCMODE) != O_WRONLY && (f->flags & O_ACCMODE) != O_RDWR)
      || stat_attr (fd, f, &attr) < 0)
    return EBADF;
  if (S_ISFIFO (f->st.st_mode))
    return ESPIPE;
  if (!S_ISREG (f->st.st_mode))
    return ENODEV;
  if ((attr & FS_IMMUTABLE_FL)
      || ((mode & ~FALLOC_FL_KEEP_SIZE) && (attr & FS_APPEND_FL)))
    return EPERM;
  f->wrote = 0;
  int err = statfs_of (f, off, len);
  if (err)
    return err;
  if (off > INT64_MAX - len)
    return __fa_busy (f, EFBIG);
  /* Seals exist on memfds (tmpfs, hugetlbfs) only, which no directory
     holds (memfd_create's files cannot be linked): ask nobody else.  */
  f->seals = 0;
  if (f->st.st_nlink == 0
      && (f->fs.f_type == FA_TMPFS || f->fs.f_type == 0x958458f6))
    {
      f->seals = fcntl (fd, F_GET_SEALS);
      if (f->seals < 0)
	f->seals = 0;
    }
  /* shmem_fallocate: growing is what F_SEAL_GROW forbids.  */
  if ((f->seals & F_SEAL_GROW) && off + len > f->st.st_size)
    return EPERM;
  return mode ? __fa_busy (f, 0) : 0;
}

/* Whether F's file is one /proc/swaps lists (its octal escapes undone),
   by device and inode, where its path there leads this process to it
   (not from another mount namespace, nor through a mount that now
   hides it).  The first SWAPS bytes of the list are read, into a
   mapping of our own, not onto a thread's stack.  In __fa_aside's
   thread, whose descriptor table is its own: the list opened in the
   process's table failed where the process had no descriptor left
   (RLIMIT_NOFILE), and the call got ENOSPC or SIGXFSZ for ETXTBSY.  */
#define SWAPS (64 << 10)
static int
swapping (void *arg)
{
  const struct fa_file *f = arg;
  struct stat64 st;
  char *buf = mmap (NULL, SWAPS + PATH_MAX, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  char *path = buf + SWAPS;
  int fd = open ("/proc/swaps", O_RDONLY | O_CLOEXEC), found = 0;
  size_t n = 0;
  ssize_t r = 0;

  if (buf == MAP_FAILED)
    {
      if (fd >= 0)
	close (fd);
      return 0;
    }
  while (fd >= 0 && n < SWAPS - 1
	 && (r = read (fd, buf + n, SWAPS - 1 - n)) > 0)
    n += (size_t) r;
  if (fd >= 0)
    close (fd);
  buf[n] = '\0';
  /* After the header, one swap area per line, its path first.  */
  for (char *p = strchr (buf, '\n'); !found && p && *++p;
       p = strchr (p, '\n'))
    {
      size_t k = 0;

      while (*p && *p != ' ' && *p != '\t' && *p != '\n' && k < PATH_MAX - 1)
	if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0'
	    && p[2] <= '7' && p[3] >= '0' && p[3] <= '7')
	  {
	    path[k++] = (char) ((p[1] - '0') << 6 | (p[2] - '0') << 3
				| (p[3] - '0'));
	    p += 4;
	  }
	else
	  path[k++] = *p++;
      path[k] = '\0';
      found = stat64 (path, &st) == 0 && st.st_dev == f->st.st_dev
	      && st.st_ino == f->st.st_ino;
    }
  munmap (buf, SWAPS + PATH_MAX);
  return found;
}

/* An active swap file: the kernel refuses fallocate on it with ETXTBSY
   before it looks at sizes, limits or space, and every write to it too,
   even one of no bytes, which changes nothing anywhere.  A write of ours
   that lands (or a page faulted in, which needs a hole) thus proves the
   file is none, and the fallback asks only where none has, before an
   error or a signal of its own and at its end: a one-byte call at the
   end of file (xfstests generic/438 makes thousands) saves a system
   call.  xfs answers an empty write before its swap check: there an
   error of ours is checked against /proc/swaps, and a request with
   nothing to write (a swap file has no holes) returns 0.  ERR, or
   ETXTBSY.  */
int
__fa_busy (const struct fa_file *f, int err)
{
  if (err == ETXTBSY || f->wrote)
    return err;
  if (pwrite64 (f->fd, "", 0, 0) < 0 && errno == ETXTBSY)
    return ETXTBSY;
  return err && f->fs.f_type == 0x58465342
	 && __fa_aside (swapping, (void *) f) == 1 ? ETXTBSY : err;
}

/* Whether a write-sealed file (a memfd with F_SEAL_WRITE) refuses every
   write from now on: then no write can fail for lack of space, and the
   kernel allocates without writing, which we cannot.  Not
   F_SEAL_FUTURE_WRITE: a writable mapping made before it still writes,
   and may fail for lack of space; our writes and mappings get EPERM
   there, which the call returns (an outside review: 0 with nothing
   allocated).  */
int
__fa_unwritable (const struct fa_file *f)
{
  return (f->seals & F_SEAL_WRITE) != 0;
}

/* Two calls of ours on the same file at once, from two threads, would
   each see the other's zeros as someone else's and the file could end
   up longer than either asked.  They take turns, per file: a lock per
   stripe of inode numbers, so that calls on other files rarely wait.

   A call from a signal handler that interrupted a call of ours in the
   same thread goes on without the lock rather than wait for itself.  So
   a stripe's word is its holder's thread ID, 0 when free: taking it and
   naming the holder are one compare-and-swap, letting it go one store,
   and a handler, wherever it interrupts, finds the word either free or
   naming its own thread (a mutex with its holder recorded beside it
   leaves a gap on each side where the handler waits for itself).
   Nothing else is taken on the way, not even a pthread_once (a handler
   interrupting its first run waits for itself).  Such a call never
   waits for another thread either: two threads each interrupted by a
   handler that calls on the file the other is filling would wait for
   each other for ever; it goes on as a call from another process would,
   without a turn.  A child forked while another thread held a lock gets
   them all free (pthread_atfork); one made by clone or a raw fork,
   which run no atfork handler, finds the holder missing from its thread
   group and takes the word over.  */
#define STRIPES 16
static struct
{
  int owner;			/* thread ID of the holder, or 0 */
  int waiters;			/* threads asleep on owner, or about to be */
} stripe[STRIPES];

/* The thread's ID, asked once per thread (gettid is a system call); 0
   until then, and again in a forked child, where it changed.  */
static __thread int tid;

/* How many stripes this thread holds: more than 0 in a handler that
   interrupted a call of ours.  */
static __thread int holding;

/* Whether thread HELD is gone from this process (tgkill's ESRCH).  */
static int
gone_holder (int held)
{
  int saved = errno, r;

  r = syscall (SYS_tgkill, getpid (), held, 0) < 0 && errno == ESRCH;
  errno = saved;
  return r;
}

static void
forked (void)
{
  memset (stripe, 0, sizeof stripe);
  tid = holding = 0;
}

/* When the library is loaded: pthread_atfork at the first call would
   need a pthread_once, which a signal handler can interrupt.  */
static void __attribute__ ((constructor))
init (void)
{
  pthread_atfork (NULL, NULL, forked);
}

void
__fa_lock (struct fa_file *f)
{
  int i = (int) (f->st.st_ino % STRIPES);
  int self = tid ? tid : (tid = (int) syscall (SYS_gettid)), held = 0;

  f->locked = 0;
  while (!__atomic_compare_exchange_n (&stripe[i].owner, &held, self, 0,
				       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
    {
      if (held == self || holding)
	return;
      if (gone_holder (held))
	{
	  __atomic_compare_exchange_n (&stripe[i].owner, &held, 0, 0,
				       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	  held = 0;
	  continue;
	}
      /* Asleep only while the word still names HELD; __fa_unlock wakes
	 a sleeper it can see, and one it cannot see finds the word
	 changed and does not sleep.  */
      __atomic_add_fetch (&stripe[i].waiters, 1, __ATOMIC_SEQ_CST);
      syscall (SYS_futex, &stripe[i].owner, FUTEX_WAIT_PRIVATE, held,
	       NULL, NULL, 0);
      __atomic_sub_fetch (&stripe[i].waiters, 1, __ATOMIC_SEQ_CST);
      held = 0;
    }
  holding++;
  f->locked = 1;
}

/* Nonzero if calls of ours may have changed the file since F's check.  */
int
__fa_stale (const struct fa_file *f)
{
  return __atomic_load_n (&generation, __ATOMIC_ACQUIRE) != f->gen;
}

void
__fa_unlock (struct fa_file *f)
{
  int i = (int) (f->st.st_ino % STRIPES);

  __atomic_add_fetch (&generation, 1, __ATOMIC_RELEASE);
  if (f->locked)
    {
      holding--;
      __atomic_store_n (&stripe[i].owner, 0, __ATOMIC_SEQ_CST);
      if (__atomic_load_n (&stripe[i].waiters, __ATOMIC_SEQ_CST))
	syscall (SYS_futex, &stripe[i].owner, FUTEX_WAKE_PRIVATE, 1,
		 NULL, NULL, 0);
    }
}

/* The caller's O_SYNC or O_DSYNC asks that what we allocated be on disk
   when we return: the pages we faulted in were not written through the
   descriptor, so its flags did not wait for them.  */
int
__fa_sync (const struct fa_file *f)
{
  if ((f->flags & O_DSYNC)
      && ((f->flags & O_SYNC) == O_SYNC ? fsync (f->fd)
	  : fdatasync (f->fd)) < 0)
    return errno;
  return 0;
}

/* Not const: .bss costs nothing, .rodata would put a megabyte of zeros in
   the library file.  Never written.  Aligned for O_DIRECT descriptors.  */
static char zeros[FA_CHUNK] __attribute__ ((aligned (4096)));

/* Up to N zeros written at POS through F's descriptor (which must not be
   O_APPEND): the count written in *DONE.  A write that returns 0 (a FUSE
   server may) is EIO, not a reason to try forever.  */
int
__fa_write_zeros (struct fa_file *f, int64_t pos, size_t n, size_t *done)
{
  *done = 0;
  while (n > 0)
    {
      ssize_t w = pwrite64 (f->fd, zeros, n < FA_CHUNK ? n : FA_CHUNK, pos);
      if (w < 0 && errno != EINTR)
	return errno;
      if (w == 0)
	return EIO;
      if (w > 0)
	{
	  pos += w;
	  n -= (size_t) w;
	  *done += (size_t) w;
	  f->wrote = 1;
	}
    }
  return 0;
}

/* FIEMAP over LEN bytes from FROM: the extents in FM, at most
   FA_EXTENTS.  */
static int
fiemap (int fd, int64_t from, uint64_t len, struct fa_extents *fm)
{
  /* All of it: valgrind does not know what the ioctl writes.  */
  memset (fm, 0, sizeof *fm);
  fm->m.fm_start = (uint64_t) from;
  fm->m.fm_length = len;
  fm->m.fm_extent_count = FA_EXTENTS;
  return ioctl (fd, FS_IOC_FIEMAP, &fm->m) < 0 ? errno : 0;
}

/* Past the filesystem's largest file the kernel says EFBIG; so does
   FIEMAP from there (fiemap_prep), which also tells whether FIEMAP
   works here (F->fiemap).  Below 2 GiB, which every filesystem of note
   holds, it is not asked (small calls are frequent): a write past the
   limit gets EFBIG from the kernel, and the fallback undoes its part.  */
/* FIEMAP over the byte at FROM, asked to count extents, not list them:
   0 or its error.  A reply buffer (3.6 KiB) on the stack would add that
   much to what a signal handler's alternate stack must hold.  */
static int
fiemap_probe (int fd, int64_t from)
{
  struct fiemap m;

  memset (&m, 0, sizeof m);
  m.fm_start = (uint64_t) from;
  m.fm_length = 1;
  return ioctl (fd, FS_IOC_FIEMAP, &m) < 0 ? errno : 0;
}

int
__fa_too_big (struct fa_file *f, int64_t end)
{
  int err;

  if (end <= INT32_MAX)
    return 0;
  /* fiemap_prep refuses a start above s_maxbytes, vfs_fallocate an end:
     ask from END, one byte (a length of 0 is EINVAL, which made a range
     ending at INT64_MAX pass on ext4).  */
  err = fiemap_probe (f->fd, end);
  f->fiemap = err == 0;
  return err == EFBIG ? EFBIG : 0;
}

/* Whether holes can be found in F's file: by FIEMAP (asked once), or by
   lseek on a descriptor of our own.  */
int
__fa_holes_known (struct fa_file *f)
{
  if (f->fiemap < 0)
    f->fiemap = fiemap_probe (f->fd, 0) == 0;
  return f->fiemap || f->seek >= 0;
}

/* The holes by lseek on a descriptor of our own (F->seek): as
   __fa_next_hole.  */
static int
seek_hole (const struct fa_file *f, int64_t *from, int64_t *to)
{
  int64_t h = lseek64 (f->seek, *from, SEEK_HOLE), d;

  /* ENXIO: *FROM lies past the end of file, all of it a hole.  */
  if (h < 0)
    return errno == ENXIO ? 1 : -1;
  /* tmpfs rounds the end-of-file hole of a file ending near INT64_MAX
     up to 2^63, which reads as negative: no hole in range either.  */
  if (h >= *to)
    return 0;
  d = lseek64 (f->seek, h, SEEK_DATA);
  if (d < 0 && errno != ENXIO)
    return -1;
  *from = h;
  if (d >= 0 && d < *to)
    *to = d;
  return 1;
}

/* The first hole of [*FROM, TO) as [*FROM, *TO): 1, or 0 if there is
   none, or -1 if the filesystem cannot tell (no FIEMAP: tmpfs, FUSE,
   network filesystems) or the ioctl fails.  Extents in any state
   (unwritten, delayed allocation, inline) are allocated.  Without FIEMAP,
   SEEK_HOLE and SEEK_DATA on a descriptor of our own tell, if we have
   one (__fa_own).  */
int
__fa_next_hole (struct fa_file *f, int64_t *from, int64_t *to)
{
  struct fa_extents *fm = &f->fm;
  int64_t at = *from;

  if (!__fa_holes_known (f))
    return -1;
  if (!f->fiemap)
    return seek_hole (f, from, to);
  while (at < *to)
    {
      /* One reply describes [fm_from, fm_to): the walk over a file of
	 many holes asks once per FA_EXTENTS extents, not once per hole
	 (FIEMAP walks block maps from the start of its range).  */
      if (!(f->fm_from <= at && at < f->fm_to))
	{
	  if (fiemap (f->fd, at, (uint64_t) (*to - at), fm))
	    return -1;
	  unsigned n = fm->m.fm_mapped_extents;
	  const struct fiemap_extent *e = &fm->m.fm_extents[n ? n - 1 : 0];
	  f->fm_from = at;
	  f->fm_to = n == FA_EXTENTS && !(e->fe_flags & FIEMAP_EXTENT_LAST)
		     ? (int64_t) (e->fe_logical + e->fe_length) : *to;
	}
      for (unsigned i = 0; i < fm->m.fm_mapped_extents; i++)
	{
	  const struct fiemap_extent *e = &fm->m.fm_extents[i];
	  int64_t start = (int64_t) e->fe_logical;

	  if (start + (int64_t) e->fe_length <= at)
	    continue;
	  if (start > at)
	    {
	      *from = at;
	      *to = start < *to ? start : *to;
	      return 1;
	    }
	  at = start + (int64_t) e->fe_length;
	}
      /* Past the last extent the reply knows of: a hole up to its end,
	 or, if it ended at its last extent, ask again from there.  */
      if (at < f->fm_to && at < *to)
	{
	  *from = at;
	  *to = f->fm_to < *to ? f->fm_to : *to;
	  return 1;
	}
    }
  return 0;
}

/* Forget what FIEMAP said: the file may have changed since.  */
void
__fa_forget (struct fa_file *f)
{
  f->fm_from = f->fm_to = 0;
}

/* Whether the byte at AT reads as a hole right now, as close as we can
   ask before writing it: FIEMAP finds no extent there where it works,
   (or lseek, on a descriptor of our own), and, where the descriptor
   reads, the byte is zero (a page written through a mapping may not be
   allocated yet).  Nonzero if so, else 0,
   -1 with errno set if neither can be asked.  */
int
__fa_in_hole (struct fa_file *f, int64_t at)
{
  int64_t from = at, to = at + 1;
  int known;

  __fa_forget (f);
  known = __fa_next_hole (f, &from, &to);
  char c;
  ssize_t r;

  /* An extent past the end of file (xfs preallocates there) still
     needs the write that makes the size.  */
  if (known == 0)
    {
      struct stat64 st;
      return fstat64 (f->fd, &st) < 0 ? -1 : at >= st.st_size;
    }
  if ((f->flags & O_ACCMODE) != O_RDWR)
    {
      if (known > 0)
	return 1;
      errno = EBADF;
      return -1;
    }
  while ((r = pread64 (f->fd, &c, 1, at)) < 0 && errno == EINTR)
    ;
  return r < 0 ? -1 : r == 0 || c == 0;
}

struct own
{
  struct fa_file *f;
  int (*fn) (void *);
  void *arg;
  char thread[48];		/* the caller's thread under /proc */
  int xfsz;			/* a write of ours raised SIGXFSZ */
};

/* A descriptor table of the calling thread's own, empty: close_range
   unshares the table and copies only the descriptors below the range it
   closes, none here, so that none of the process's open files is held
   (a pipe another thread closes reaches EOF at its reader at once) or
   closed (a close of a copy is a FLUSH to a FUSE server).  Linux 5.9;
   before that, or where a sandbox refuses close_range, unshare copies
   the whole table, which holds every open file until the call ends.  */
static int
own_table (void)
{
#ifdef SYS_close_range
  if (syscall (SYS_close_range, 0U, ~0U, FA_CLOSE_RANGE_UNSHARE) == 0)
    return 0;
#endif
  return unshare (CLONE_FILES);
}

/* Whether a lease is held on F's file (opening it would break the lease
   after a wait of up to lease-break-time, 45 s), by /proc/locks:
   F_GETLEASE's answer is not translated by qemu-user, and F_UNLCK
   differs between ABIs (alpha, hppa, sparc).  Whichever process took it:
   the kernel grants no lease beside a writer, so while the caller's
   descriptor is open for writing one can only be on that open file, and
   a child that inherited it may have taken it.  The device is compared
   but on btrfs, whose st_dev is its subvolume's, not the superblock's
   that /proc/locks names.  In __fa_aside's thread, so nothing is opened
   in the process's table.  */
static int
leased (const struct fa_file *f)
{
  char line[256], type[16];
  unsigned long long ino;
  unsigned maj, min;
  int found = 0;
  FILE *l = fopen ("/proc/locks", "re");

  if (l == NULL)
    return 0;
  while (!found && fgets (line, sizeof line, l))
    found = sscanf (line, "%*d: %15s %*s %*s %*d %x:%x:%llu", type, &maj,
		    &min, &ino) == 4
	    && strcmp (type, "LEASE") == 0
	    && ino == (unsigned long long) f->st.st_ino
	    && (f->fs.f_type == FA_BTRFS
		|| (maj == major (f->st.st_dev) && min == minor (f->st.st_dev)));
  fclose (l);
  return found;
}

/* The process's descriptor FD copied into the calling thread's table
   (pidfd_getfd on our own process, Linux 5.6), or -1.  */
static int
own_copy (int fd)
{
#if defined SYS_pidfd_open && defined SYS_pidfd_getfd
  int pidfd = (int) syscall (SYS_pidfd_open, getpid (), 0), copy = -1;

  if (pidfd >= 0)
    {
      copy = (int) syscall (SYS_pidfd_getfd, pidfd, fd, 0);
      close (pidfd);
    }
  return copy;
#else
  (void) fd;
  return -1;
#endif
}

/* The thread of __fa_own.  Its descriptor table is its own: what it
   opens and closes there is nobody else's business, nor are the
   process's record locks, which belong to the table the process shares.
   The caller's descriptor is reopened through the caller's thread in
   /proc (/proc/self/fd is the main thread's, which may have exited).  */
static int
own (void *arg)
{
  struct own *o = arg;
  struct fa_file *f = o->f, saved = *f;
  /* O_APPEND: an append-only file (chattr +a) opens for writing no
     other way.  */
  static const int tries[] = { O_RDWR, O_WRONLY, O_WRONLY | O_APPEND,
			       O_RDONLY };
  struct stat64 st;
  sigset_t pending;
  char path[96];
  int err, nfd = -1, wfd = -1;

  if (leased (f))
    return EBADF;
  f->own = 1;
  snprintf (path, sizeof path, "/proc/%s/fd/%d", o->thread, f->fd);
  for (int i = 0; nfd < 0 && i < 4; i++)
    nfd = open (path, tries[i] | O_CLOEXEC | O_NOCTTY | O_LARGEFILE);
  /* Something else mounted on /proc would give another file.  */
  if (nfd >= 0 && (fstat64 (nfd, &st) < 0 || st.st_dev != f->st.st_dev
		   || st.st_ino != f->st.st_ino))
    {
      close (nfd);
      nfd = -1;
    }
  /* lseek is asked only where FIEMAP is missing, and believed only on
     tmpfs: most filesystems without FIEMAP (jfs, exfat, FUSE servers)
     answer through generic_file_llseek, all of the file data, which
     shows only in a file that is sparse right now.  A tmpfs file that is
     sparse by st_blocks and has no hole is the same lie (a test makes
     it).  */
  if (nfd >= 0 && f->fs.f_type == FA_TMPFS
      && (lseek64 (nfd, 0, SEEK_HOLE) < st.st_size
	  || st.st_blocks * 512 >= st.st_size))
    f->seek = nfd;
  /* Written through if it can write; the caller's O_DSYNC still asks
     for the sync at the end.  Where the file's mode no longer lets us
     open it for writing, through the caller's open file, copied into
     our table.  */
  if (nfd >= 0 && ((f->flags = fcntl (nfd, F_GETFL)) & O_ACCMODE) != O_RDONLY)
    {
      f->fd = nfd;
      f->flags |= saved.flags & O_DSYNC;
    }
  else if (!(saved.flags & O_DIRECT) && (wfd = own_copy (f->fd)) >= 0)
    {
      f->fd = wfd;
      f->flags = saved.flags;
    }
  else
    {
      if (nfd >= 0)
	close (nfd);
      f->flags = saved.flags;
      f->seek = -1;
      f->own = 0;
      return EBADF;
    }
  err = o->fn (o->arg);
  /* The kernel sends SIGXFSZ to the thread that wrote past the limit:
     ours, where it is blocked and dies with it; the caller gets it.  */
  o->xfsz = sigpending (&pending) == 0 && sigismember (&pending, SIGXFSZ);
  if (nfd >= 0)
    close (nfd);
  if (wfd >= 0)
    close (wfd);
  f->fd = saved.fd;
  f->flags = saved.flags;
  f->seek = -1;
  f->own = 0;
  return err;
}

struct aside
{
  int (*fn) (void *);
  void *arg;
};

static void *
aside (void *arg)
{
  struct aside *a = arg;

  if (own_table () < 0)
    return (void *) (intptr_t) EBADF;
  return (void *) (intptr_t) a->fn (a->arg);
}

/* FN (ARG) in a thread of ours whose descriptor table is its own and
   empty, with every signal blocked: what it opens and closes there
   touches no descriptor, record lock or lease of the process.  FN's
   result; EBADF if no such table can be had or no thread made (a
   sandbox refusing clone3 with EPERM), ENOMEM for EAGAIN.  */
int
__fa_aside (int (*fn) (void *), void *arg)
{
  struct aside a = { fn, arg };
  sigset_t all, old;
  pthread_t t;
  void *ret;
  int err;

  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  err = pthread_create (&t, NULL, aside, &a);
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  if (err)
    return err == EAGAIN ? ENOMEM : EBADF;
  pthread_join (t, &ret);
  return (int) (intptr_t) ret;
}

/* FN (ARG) run with F's descriptor and flags those of a descriptor of
   our own for the same file, opened read-write where the file allows,
   else write-only, else read-only (then only F->seek is it), in
   __fa_aside's thread: for what the caller's descriptor cannot do (an
   O_APPEND one writes only at the end, an O_DIRECT one only aligned
   blocks, an O_WRONLY one cannot be mapped, none can be lseeked without
   moving the caller's offset).  Where the file's mode no longer lets it
   be opened for writing, writes go through a copy of the caller's
   descriptor, with its flags (not an O_DIRECT one: EBADF).  EBADF if
   the process holds a lease on the file (opening would break it) or
   there is no /proc.  */
int
__fa_own (struct fa_file *f, int (*fn) (void *), void *arg)
{
  struct own o = { f, fn, arg, "", 0 };
  ssize_t n;
  int err;

  /* Already in ours: another would open the same.  */
  if (f->own)
    return fn (arg);
  /* The caller's thread as /proc names it: in a pid namespace whose
     /proc is its parent's, "TGID/task/TID" with the parent's numbers,
     not gettid's.  */
  n = readlink ("/proc/thread-self", o.thread, sizeof o.thread - 1);
  if (n > 0)
    o.thread[n] = '\0';
  else
    snprintf (o.thread, sizeof o.thread, "self/task/%ld",
	      (long) syscall (SYS_gettid));
  err = __fa_aside (own, &o);
  if (o.xfsz)
    raise (SIGXFSZ);
  return err;
}
