/* The descriptor layer of the fallback and the emulation: what they may
   do to the caller's file, and how they learn about it.  This file: the
   checks of vfs_fallocate and what they learn about the file; the turns
   calls take are fa-lock.c's, finding holes fa-holes.c's, the descriptor
   of our own fa-own.c's.

   They work through the caller's descriptor alone, and never move its
   file offset:
   - no descriptor of our own is opened: closing one would drop every
     POSIX record lock the process holds on the file, including a lock
     another thread takes while we work (SQLite's), opening one breaks the
     process's own lease, and each shows watchers inotify events;
   - no lseek: the offset belongs to the open file description, which
     other threads and processes share, and a write(2) of theirs made
     while it is moved lands in the wrong place.  Holes are found with the
     FIEMAP ioctl instead (fa-holes.c), data is read with pread, written
     with pwrite.

   What is learnt once and kept across calls (the per-mount answers
   below, statfs_of's per thread) is one word a signal handler reads and
   writes whole, or is guarded against a handler's call in between, as
   each says.

   The convention of every function here and in the files that use them:
   0 or an error number, unless a comment says otherwise.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/fs.h>
#include <fallocate.h>
#include "fa-file.h"

/* Linux 6.8: the ID of the file's mount, never reused while the system
   runs, as stx_mnt_id (which glibc 2.36's struct statx does not name:
   byte 144 of the kernel's).  */
#ifndef STATX_MNT_ID_UNIQUE
# define STATX_MNT_ID_UNIQUE 0x4000U
#endif
#define STX_MNT_ID 144

/* A mount's answer to a question asked once per mount, kept in a slot
   of WORDS chosen by the mount's unique ID (FA_MOUNTS of them, so that
   calls alternating between mounts each find theirs: one slot made
   every call on FUSE mounts taken in turn ask again, 8-14 times
   glibc's time) as the ID << 1 | the answer: one word, which any
   thread or signal handler reads and writes whole; 0 none.  The answer
   for MNT (0: unknown, never kept), or -1 if not known.  Only where
   8-byte atomics are the processor's own (not mips, powerpc, m68k, sh
   32-bit, whose would call libatomic): elsewhere asked each time.  */
int
__fa_mount_answer (const uint64_t words[FA_MOUNTS], uint64_t mnt)
{
#ifdef __GCC_HAVE_SYNC_COMPARE_AND_SWAP_8
  uint64_t w = __atomic_load_n (&words[mnt % FA_MOUNTS], __ATOMIC_RELAXED);

  return mnt && w >> 1 == mnt ? (int) (w & 1) : -1;
#else
  (void) words, (void) mnt;
  return -1;
#endif
}

void
__fa_mount_keep (uint64_t words[FA_MOUNTS], uint64_t mnt, int answer)
{
#ifdef __GCC_HAVE_SYNC_COMPARE_AND_SWAP_8
  if (mnt)
    __atomic_store_n (&words[mnt % FA_MOUNTS], mnt << 1 | (answer != 0),
		      __ATOMIC_RELAXED);
#else
  (void) words, (void) mnt, (void) answer;
#endif
}

/* Mounts without FS_IOC_GETFLAGS (a FUSE server without ioctls: a
   round trip to it, 20 us, each time).  */
static uint64_t flagless[FA_MOUNTS];

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
  if (__fa_mount_answer (flagless, f->mnt) == 1)
    *attr = 0;
  else if (ioctl (fd, FS_IOC_GETFLAGS, attr) < 0)
    {
      *attr = 0;
      if (errno == ENOTTY || errno == ENOSYS || errno == EOPNOTSUPP)
	__fa_mount_keep (flagless, f->mnt, 1);
    }
  return 0;
}

/* Filesystems whose pages go to another machine, by statfs f_type: a
   network one writes whole dirty pages back, and the zeros of a page read
   at fault time would overwrite what another client has since written.  */
static int
remote (unsigned long type)
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

/* Filesystems without storage, by statfs f_type: their regular files
   (/proc/PID/mem, sysfs attributes) act on the kernel's memory or a
   process's when written, and have no fallocate (EOPNOTSUPP).  */
static int
pseudo (unsigned long type)
{
  switch (type & 0xffffffffUL)
    {
    case 0x9fa0:		/* proc */
    case 0x62656572:		/* sysfs */
    case 0x64626720:		/* debugfs */
    case 0x74726163:		/* tracefs */
    case 0x73636673:		/* securityfs */
    case 0x27e0eb: case 0x63677270:	/* cgroup, cgroup2 */
    case 0x62656570:		/* configfs */
    case 0xde5e81e4:		/* efivarfs */
    case 0xcafe4a11:		/* bpf */
    case 0x6165676c:		/* pstore */
    case 0xf97cff8c: case 0x43415d53:	/* selinuxfs, smackfs */
    case 0x65735543:		/* fusectl */
    case 0x42494e4d:		/* binfmt_misc */
    case 0x19800202:		/* mqueue */
    case 0x5345434d:		/* secretmem (memfd_secret) */
    case 0x50494446:		/* pidfs */
    case 0x6e736673:		/* nsfs */
      return 1;
    }
  return 0;
}

/* What F->fs's filesystem is, by its type: FA_LOCAL, FA_REMOTE or
   FA_PSEUDO.  */
static int
kind (const struct fa_file *f)
{
  unsigned long type = (unsigned long) f->fs.f_type;

  return remote (type) ? FA_REMOTE : pseudo (type) ? FA_PSEUDO : FA_LOCAL;
}

/* F's filesystem's statfs into F->fs.  A call that writes at most one
   chunk, all past the end of file (xfstests generic/438's one-byte
   calls), needs only the type and block size, which stay those of a
   local filesystem as long as it is mounted: where this thread's last
   call asked the same mount, by an ID never reused (STATX_MNT_ID_UNIQUE),
   they are taken from it, a system call saved.  f_blocks 0 then says
   that no free space is known (fa-plan.c's __fa_plan checks none: the one
   write is the check, and its failure is undone as any).  Only a
   filesystem with storage (FA_LOCAL) is remembered: a remote one is
   asked each time (a FUSE server may change its block size).  F->kind
   set.  Per thread; a signal handler's call between the reads is
   seen in the ID read again, and one between the writes leaves it alone
   (BUSY), as it would be overwritten only in part.  */
static int
statfs_of (struct fa_file *f, int64_t off, int64_t len)
{
  static FA_TLS struct
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
	  f->kind = FA_LOCAL;
	  return 0;
	}
    }
  if (fstatfs64 (f->fd, &f->fs) < 0)
    return errno;
  f->kind = kind (f);
  if (f->mnt && f->kind == FA_LOCAL && !last.busy)
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

/* The checks of vfs_fallocate, in its order, so that a call gets the same
   answer whether the kernel or this file decides.  A directory cannot be
   open for writing, so EISDIR cannot arise here; block devices (fixed
   size) and all other files get ENODEV, as with glibc; regular files on
   filesystems without storage (pseudo), EOPNOTSUPP.  MODE is one that
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
  f->gen = __fa_generation ();
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
  /* Nothing to allocate: the kernel's answer, and glibc's fallback
     would write into what the file stands for.  */
  if (f->kind == FA_PSEUDO)
    return EOPNOTSUPP;
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
  /* hugetlbfs takes no write(2), and a write seal refuses its shared
     writable mappings: nothing of ours can allocate there, and even a
     read-only mapping needs the huge pages the kernel would reserve.  */
  if ((f->seals & F_SEAL_WRITE) && f->fs.f_type == 0x958458f6)
    return EINVAL;
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
   there, which the call returns.  */
int
__fa_unwritable (const struct fa_file *f)
{
  return (f->seals & F_SEAL_WRITE) != 0;
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

