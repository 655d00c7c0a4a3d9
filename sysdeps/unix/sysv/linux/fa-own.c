/* The descriptor of our own, opened in the thread aside (fa-aside.c).

   What the caller's descriptor cannot write, a descriptor of our own
   writes: opened through /proc by a thread of ours whose descriptor
   table is its own, so that closing it drops none of the process's
   record locks (the caller's table is never touched: fa-file.c says
   why).  That is needed for holes inside the file through an O_WRONLY
   descriptor (it can neither be mapped nor read), the writing way
   through an O_APPEND or O_DIRECT one (the first appends whatever the
   offset, the second refuses one-byte writes), space past the end of
   file through an O_APPEND or O_DIRECT one, and past 2 GiB through a
   32-bit program's descriptor without O_LARGEFILE (fa-plan.c,
   __fa_needs_own, decides).  Not while a lease is held on the caller's
   open file (opening would break it), by whichever process, nor without
   /proc: then EBADF.  A lease taken between our look and our open is
   broken (doc/FALLBACK: no system call does both at once).

   The windows of what runs through it are listed with the ways
   (fa-map.c, fa-write.c).  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "fa-file.h"

struct own
{
  struct fa_file *f;
  int (*fn) (void *);
  void *arg;
  char thread[48];		/* the caller's thread under /proc */
  int xfsz;			/* a write of ours raised SIGXFSZ */
};

/* The device /proc/locks names for O's file: its superblock's.  That is
   st_dev but on btrfs, whose st_dev is its subvolume's: there the
   mount's, in /proc/self/mountinfo, found by the descriptor's mnt_id
   (fdinfo).  0 if not found.  */
static dev_t
lock_dev (const struct own *o)
{
  const struct fa_file *f = o->f;
  char line[256];
  struct fa_lines l;
  unsigned maj, min;
  int mnt = -1, id;
  dev_t dev = 0;

  if (f->fs.f_type != FA_BTRFS)
    return f->st.st_dev;
  snprintf (line, sizeof line, "/proc/%s/fdinfo/%d", o->thread, f->fd);
  if (__fa_lines_open (&l, line) < 0)
    return 0;
  while (mnt < 0 && __fa_line (&l, line, sizeof line))
    if (sscanf (line, "mnt_id: %d", &id) == 1)
      mnt = id;
  close (l.fd);
  if (mnt < 0 || __fa_lines_open (&l, "/proc/self/mountinfo") < 0)
    return 0;
  while (dev == 0 && __fa_line (&l, line, sizeof line))
    if (sscanf (line, "%d %*d %u:%u", &id, &maj, &min) == 3 && id == mnt)
      dev = makedev (maj, min);
  close (l.fd);
  return dev;
}

/* Whether a lease is held on O's file (opening it would break the lease
   after a wait of up to lease-break-time, 45 s), by /proc/locks:
   F_GETLEASE's answer is not translated by qemu-user, and F_UNLCK
   differs between ABIs (alpha, hppa, sparc).  Whichever process took it:
   the kernel grants no lease beside a writer, so while the caller's
   descriptor is open for writing one can only be on that open file, and
   a child that inherited it may have taken it.  /proc/locks names a file
   by device and inode number: two btrfs subvolumes of one filesystem
   share the device, and a lease on the other's file of the same inode
   number counts (as does any where the device is not found).  In
   __fa_aside's thread, so nothing is opened in the process's table.  */
static int
leased (const struct own *o)
{
  const struct fa_file *f = o->f;
  char line[256], type[16];
  unsigned long long ino;
  unsigned maj, min;
  int found = 0;
  struct fa_lines l;
  dev_t dev = lock_dev (o);

  if (__fa_lines_open (&l, "/proc/locks") < 0)
    return 0;
  while (!found && __fa_line (&l, line, sizeof line))
    found = sscanf (line, "%*d: %15s %*s %*s %*d %x:%x:%llu", type, &maj,
		    &min, &ino) == 4
	    && strcmp (type, "LEASE") == 0
	    && ino == (unsigned long long) f->st.st_ino
	    && (dev == 0 || (maj == major (dev) && min == minor (dev)));
  close (l.fd);
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

/* The caller's descriptor of O reopened through the caller's thread in
   /proc (/proc/self/fd is the main thread's, which may have exited), the
   file's fstat in *ST: the new descriptor, or -1.  */
static int
reopen (const struct own *o, struct stat64 *st)
{
  const struct fa_file *f = o->f;
  /* O_APPEND: an append-only file (chattr +a) opens for writing no
     other way.  */
  static const int tries[] = { O_RDWR, O_WRONLY, O_WRONLY | O_APPEND,
			       O_RDONLY };
  char path[96];
  int nfd = -1;

  snprintf (path, sizeof path, "/proc/%s/fd/%d", o->thread, f->fd);
  for (int i = 0; nfd < 0 && i < 4; i++)
    nfd = open (path, tries[i] | O_CLOEXEC | O_NOCTTY | O_LARGEFILE);
  /* Something else mounted on /proc would give another file.  */
  if (nfd >= 0 && (fstat64 (nfd, st) < 0 || st->st_dev != f->st.st_dev
		   || st->st_ino != f->st.st_ino))
    {
      close (nfd);
      nfd = -1;
    }
  return nfd;
}

/* The thread of __fa_own.  Its descriptor table is its own: what it
   opens and closes there is nobody else's business, nor are the
   process's record locks, which belong to the table the process shares.
   The caller's descriptor is reopened (reopen).  */
static int
own (void *arg)
{
  struct own *o = arg;
  struct fa_file *f = o->f, saved = *f;
  struct stat64 st;
  sigset_t pending;
  int err, nfd, wfd = -1;

  if (leased (o))
    return EBADF;
  f->own = 1;
  nfd = reopen (o, &st);
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
