/* t-posix DIR: posix_fallocate allocates without changing a byte that
   existed, returns an error number with errno untouched, and gives the
   kernel's answer to bad input whether or not its fallback runs.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <linux/magic.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

#define ERRNO_MARK 4242

static const char *dir;
static int fallback;		/* the zero-writing path runs here */

static int
call (int fd, int64_t off, int64_t len, int *errno_kept)
{
  errno = ERRNO_MARK;
  int r = posix_fallocate64 (fd, off, len);
  *errno_kept = errno == ERRNO_MARK;
  return r;
}

static void
fails (const char *what, int fd, int64_t off, int64_t len, int want)
{
  int kept, r = call (fd, off, len, &kept);
  t_ok (r == want && kept, "posix_fallocate %s: %d, errno kept (got %d)", what, want, r);
}

static void
errors (void)
{
  char path[4096];
  int fd = t_create (dir, "perrors", path, sizeof path), p[2];
  int ro = open (path, O_RDONLY), op = open (path, O_PATH), am3 = open (path, 3);
  int nul = open ("/dev/null", O_WRONLY), s = socket (AF_UNIX, SOCK_STREAM, 0);

  t_put (fd, 0, 4096, 9);
  fails ("bad fd", -1, 0, 1, EBADF);
  fails ("closed fd", 999, 0, 1, EBADF);
  fails ("offset < 0", fd, -1, 1, EINVAL);
  fails ("len 0", fd, HI_OFF, 0, EINVAL);
  fails ("len < 0", fd, HI_OFF, -HI_LEN, EINVAL);
  fails ("read-only fd", ro, HI_OFF, SMALL_LEN, EBADF);
  fails ("O_PATH fd", op, HI_OFF, SMALL_LEN, EBADF);
  /* Access mode 3: neither read nor write (ioctl-only descriptors).  */
  fails ("access mode 3 fd", am3, 0, SMALL_LEN, EBADF);
  fails ("offset + len overflows", fd, INT64_MAX - 10, HI_LEN, EFBIG);
  fails ("len overflows", fd, HI_OFF, INT64_MAX, EFBIG);
  if (pipe (p) == 0)
    fails ("pipe", p[1], 0, SMALL_LEN, ESPIPE);
  fails ("/dev/null", nul, 0, SMALL_LEN, ENODEV);
  fails ("socket", s, 0, SMALL_LEN, ENODEV);
  t_ok (t_size (fd) == 4096 && t_same (fd, 0, 4096, 9),
	"bad input changed nothing");
  errno = ERRNO_MARK;
  t_ok (posix_fallocate (-1, 0, 1) == EBADF && errno == ERRNO_MARK,
	"posix_fallocate (off_t) bad fd");
  unlink (path);
}

/* A file laid out as data and holes, given as pairs (offset, length) of
   data; the model of every byte is: pattern SEED+i in segment i, zero
   elsewhere.  */
struct layout
{
  const char *name;
  int64_t seg[4][2];
  int nseg;
  int64_t size;			/* final truncate, 0: end of last segment */
  int64_t off, len;		/* the call */
};

static const struct layout layouts[] = {
  { "empty file, odd length", {{0}}, 0, 0, 0, (1 << 20) + 123 },
  { "data, hole, data, past EOF", {{0, 65536}, {196608, 65536}}, 2, 0,
    32768, 262144 },
  { "above 4 GiB: hole, data, past EOF",
    {{HI_OFF - 8192, 8192}, {HI_OFF + 65536, 4096}}, 2, 0, HI_OFF, SMALL_LEN },
  { "offset past EOF", {{0, 4096}}, 1, 0, 1 << 20, 262144 },
  { "inside data only", {{0, 262144}}, 1, 0, 4096, 65536 },
  { "unaligned, inside a hole", {{0, 1000}}, 1, 300000, 1001, 200000 },
};

static void
build (int fd, const struct layout *l)
{
  for (int i = 0; i < l->nseg; i++)
    t_put (fd, l->seg[i][0], (size_t) l->seg[i][1], 10 + i);
  if (l->size)
    ftruncate64 (fd, l->size);
}

/* Every byte as the model says, and the range allocated.  */
static void
verify (int fd, const struct layout *l, int64_t size0, const char *how)
{
  int64_t end = l->off + l->len, want = end > size0 ? end : size0;
  int64_t holes = 0, pos = 0;
  int same = 1;

  t_ok (t_size (fd) == want, "%s, %s: size %lld (got %lld)", l->name, how,
	(long long) want, (long long) t_size (fd));
  for (int i = 0; i < l->nseg; i++)
    {
      int64_t s = l->seg[i][0], e = s + l->seg[i][1];
      same &= t_same (fd, s, (size_t) l->seg[i][1], 10 + i);
      /* Bytes of the range that were holes before: must be zeros now.  */
      int64_t hs = pos > l->off ? pos : l->off, he = s < end ? s : end;
      if (he > hs)
	{
	  same &= t_zero (fd, hs, (size_t) (he - hs));
	  holes += he - hs;
	}
      pos = e;
    }
  int64_t hs = pos > l->off ? pos : l->off;
  if (end > hs)
    {
      same &= t_zero (fd, hs, (size_t) (end - hs));
      holes += end - hs;
    }
  t_ok (same, "%s, %s: existing bytes unchanged, new ones zero", l->name, how);
  /* Absolute, not a difference: xfs trims its speculative preallocation
     past EOF at any time.  Partial blocks at the edges of holes may have
     been allocated before.  */
  int64_t data = 0, slack = 2 * 4096 * (l->nseg + 1);
  for (int i = 0; i < l->nseg; i++)
    data += l->seg[i][1];
  t_ok (t_alloc (fd) >= data + holes - slack,
	"%s, %s: range allocated (%lld bytes for %lld data + %lld holes)",
	l->name, how, (long long) t_alloc (fd), (long long) data,
	(long long) holes);
  if (fallback)
    t_ok (t_nohole (fd, l->off, l->len), "%s, %s: no hole left in range",
	  l->name, how);
}

static void
scenarios (const char *how, int flags)
{
  char path[4096];

  for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
    {
      const struct layout *l = &layouts[i];
      int fd = t_create (dir, "layout", path, sizeof path), kept, r;

      build (fd, l);
      int64_t size0 = t_size (fd);
      int cfd = flags == O_RDWR ? fd : open (path, flags | O_LARGEFILE);
      if (cfd < 0)
	{
	  t_unsupported ("%s, %s: open: %s", l->name, how, strerror (errno));
	  close (fd);
	  unlink (path);
	  continue;
	}
      lseek64 (cfd, HI_OFF + 5, SEEK_SET);
      r = call (cfd, l->off, l->len, &kept);
      t_ok (r == 0 && kept, "%s, %s: returns 0, errno kept (got %d)", l->name, how, r);
      t_ok (lseek64 (cfd, 0, SEEK_CUR) == HI_OFF + 5,
	    "%s, %s: file offset unchanged", l->name, how);
      verify (fd, l, size0, how);
      /* (An O_DIRECT descriptor refuses the one-byte write.)  */
      if ((flags & O_APPEND) && !(flags & O_DIRECT))
	{
	  /* The descriptor still appends at the (new) end, nothing else was.  */
	  int64_t end = t_size (fd);
	  t_ok (write (cfd, "Z", 1) == 1 && t_size (fd) == end + 1,
		"%s, %s: appends still go to the end", l->name, how);
	}
      if (cfd != fd)
	close (cfd);
      close (fd);
      unlink (path);
    }
}

/* A 32-bit program's descriptor opened without O_LARGEFILE: the kernel
   allocates past 2 GiB through it, so must the fallback (64-bit kernels
   set O_LARGEFILE on every descriptor of a 64-bit program).  */
static void
no_largefile (void)
{
  char path[4096];
  int fd = t_create (dir, "nolfs", path, sizeof path), kept;
  int nl = open (path, O_RDWR);

  t_put (fd, 0, 4096, 22);
  int r = call (nl, HI_OFF, 4096, &kept);
  t_ok (r == 0 && t_size (fd) == HI_OFF + 4096 && t_same (fd, 0, 4096, 22),
	"descriptor without O_LARGEFILE: allocated past 4 GiB (got %d)", r);
  close (nl);
  close (fd);
  unlink (path);
}

static volatile sig_atomic_t sigio;

static void
on_sigio (int sig)
{
  (void) sig;
  sigio++;
}

/* The process's own record lock on the file, held by another process's
   test: closing any descriptor of the file drops such locks, so the
   fallback must not open and close descriptors of its own then.  */
static int
lock_held (const char *path)
{
  pid_t pid = fork ();
  int status;

  if (pid == 0)
    {
      struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
      int fd = open (path, O_RDWR);
      _exit (fd < 0 || fcntl (fd, F_GETLK, &lk) < 0 || lk.l_type != F_WRLCK
	     || lk.l_pid != getppid ());
    }
  return pid > 0 && waitpid (pid, &status, 0) == pid && WIFEXITED (status)
	 && WEXITSTATUS (status) == 0;
}

/* Record locks and leases survive posix_fallocate, and its writes there
   still undo themselves on failure.  */
static void
locks (void)
{
  char path[4096];
  struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 100 };
  struct rlimit old, lim;
  int fd = t_create (dir, "locked", path, sizeof path), kept, r;
  int wo = open (path, O_WRONLY | O_LARGEFILE);

  t_put (fd, 0, 4096, 23);
  t_ok (fcntl (wo, F_SETLK, &lk) == 0 && lock_held (path),
	"record lock: held before");
  r = call (wo, 65536, 262144, &kept);
  t_ok (r == 0 && t_size (fd) == 65536 + 262144 && t_same (fd, 0, 4096, 23)
	&& t_zero (fd, 4096, 65536 + 262144 - 4096),
	"record lock: O_WRONLY range past EOF allocated (got %d)", r);
  t_ok (lock_held (path), "record lock: still held after");
  r = call (wo, 0, 65536 + 262144, &kept);
  t_ok (r == 0 && t_alloc (fd) >= 65536 + 262144 && lock_held (path),
	"record lock: hole filled, lock still held (got %d)", r);

  /* Past RLIMIT_FSIZE, the writes fail part way: EFBIG, the size as it
     was, counting the last short write.  */
  getrlimit (RLIMIT_FSIZE, &old);
  lim = old;
  lim.rlim_cur = t_size (fd) + (3 << 19);
  signal (SIGXFSZ, SIG_IGN);
  int64_t size0 = t_size (fd);
  if (setrlimit (RLIMIT_FSIZE, &lim) == 0)
    {
      r = call (wo, size0 + 4096, 4 << 20, &kept);
      setrlimit (RLIMIT_FSIZE, &old);
      t_ok (r == EFBIG && t_size (fd) == size0 && t_same (fd, 0, 4096, 23),
	    "record lock, past RLIMIT_FSIZE: EFBIG, size %lld as before "
	    "(got %d, %lld)", (long long) size0, r, (long long) t_size (fd));
    }
  signal (SIGXFSZ, SIG_DFL);
  close (wo);

  /* A write lease needs the file open once only: FD.  */
  signal (SIGIO, on_sigio);
  if (fcntl (fd, F_SETLEASE, F_WRLCK) < 0)
    t_unsupported ("lease: %s", strerror (errno));
  else
    {
      r = call (fd, 0, 1 << 20, &kept);
      t_ok (r == 0 && t_size (fd) == 1 << 20
	    && fcntl (fd, F_GETLEASE) == F_WRLCK && sigio == 0,
	    "lease: kept, not broken (got %d, %d signals)", r, (int) sigio);
      fcntl (fd, F_SETLEASE, F_UNLCK);
    }
  signal (SIGIO, SIG_DFL);
  close (fd);
  unlink (path);
}

struct appender
{
  int fd;
  int64_t after, at;
  volatile int done;
};

/* Appends a marker once the file has grown past A->after, unless the
   call is over by then.  */
static void *
append_marker (void *arg)
{
  struct appender *a = arg;

  while (t_size (a->fd) <= a->after && !a->done)
    ;
  /* The descriptor's offset ends where the append landed.  */
  if (!a->done && write (a->fd, "WRITER-DATA!", 12) == 12)
    a->at = lseek64 (a->fd, 0, SEEK_CUR) - 12;
  return NULL;
}

/* A writer appends while the fallback appends, then the fallback fails
   (RLIMIT_FSIZE): the size is no longer the fallback's to truncate, and
   the writer's bytes stay.  */
static void
append_then_fail (void)
{
  char path[4096], got[12];
  struct rlimit old, lim;
  struct appender a = { -1, 4096 + (1 << 20), -1, 0 };
  pthread_t th;
  int fd = t_create (dir, "appender", path, sizeof path), kept, r;

  t_put (fd, 0, 4096, 24);
  a.fd = open (path, O_WRONLY | O_APPEND | O_LARGEFILE);
  getrlimit (RLIMIT_FSIZE, &old);
  lim = old;
  lim.rlim_cur = 8 << 20;
  signal (SIGXFSZ, SIG_IGN);
  if (setrlimit (RLIMIT_FSIZE, &lim) < 0
      || pthread_create (&th, NULL, append_marker, &a) != 0)
    t_unsupported ("appender: %s", strerror (errno));
  else
    {
      r = call (fd, 0, 16 << 20, &kept);
      a.done = 1;
      pthread_join (th, NULL);
      setrlimit (RLIMIT_FSIZE, &old);
      if (a.at < 0)
	t_unsupported ("appender, then failure: the writer came too late");
      else
	t_ok (r == EFBIG && a.at >= 4096 && pread64 (fd, got, 12, a.at) == 12
	    && memcmp (got, "WRITER-DATA!", 12) == 0
	    && t_same (fd, 0, 4096, 24),
	    "appender, then failure: EFBIG, the writer's bytes at %lld kept "
	    "(got %d)", (long long) a.at, r);
    }
  signal (SIGXFSZ, SIG_DFL);
  close (a.fd);
  close (fd);
  unlink (path);
}

/* More than the free space: ENOSPC, and the file as it was.  */
static int
too_large (int fd, const char *what)
{
  struct statvfs v;

  fstatvfs (fd, &v);
  if ((int64_t) v.f_blocks * v.f_frsize <= (1LL << 30))
    return 0;
  t_unsupported ("%s: filesystem too large to fill in a test", what);
  return 1;
}

/* More than the free space: ENOSPC, data unchanged.  The fallback also
   keeps the size and the free space; by the system call the filesystem
   decides (ext4 keeps what it allocated and the size it reached).  */
static void
enospc (void)
{
  char path[4096];
  struct statvfs v;
  int fd = t_create (dir, "enospc", path, sizeof path), kept, r;

  t_put (fd, 0, 4096, 20);
  if (too_large (fd, "ENOSPC"))
    goto out;
  /* xfs frees the blocks of unlinked files in the background: let it
     finish (syncfs waits for that), and ask well beyond what is free.  */
  syncfs (fd);
  fstatvfs (fd, &v);
  int64_t freeb = (int64_t) v.f_bfree * v.f_frsize;
  r = call (fd, 4096, freeb + (64 << 20), &kept);
  t_ok (r == ENOSPC && kept, "ENOSPC: more than the free space fails (got %d)", r);
  t_ok (t_same (fd, 0, 4096, 20), "ENOSPC: data as before");
  fstatvfs (fd, &v);
  if (fallback)
    {
      t_ok (t_size (fd) == 4096, "ENOSPC: size as before (%lld)",
	    (long long) t_size (fd));
      t_ok ((int64_t) (v.f_bfree * v.f_frsize) >= freeb - (1 << 20),
	    "ENOSPC: free space as before");
    }
out:
  close (fd);
  unlink (path);
}

/* What posix_fallocate is for: after it, writes into the range cannot
   fail for lack of space, even with the filesystem full.  */
static void
reserve (void)
{
  char path[4096], fpath[4096];
  struct statfs sf;
  int64_t n = 4 << 20;
  int fd = t_create (dir, "reserve", path, sizeof path), kept, r, wrote = 1;

  if (too_large (fd, "reserve"))
    goto out;
  if (fallback && fstatfs (fd, &sf) == 0 && sf.f_type == BTRFS_SUPER_MAGIC)
    {
      t_unsupported ("reserve: btrfs copies on write, so zeros written by "
		     "the fallback reserve no space for later overwrites");
      goto out;
    }
  r = call (fd, 0, n, &kept);
  t_ok (r == 0, "reserve: 4 MiB allocated (got %d)", r);
  int ffd = t_create (dir, "filler", fpath, sizeof fpath);
  static char junk[1 << 16];
  for (int64_t at = 0;; at += sizeof junk)
    if (pwrite64 (ffd, junk, sizeof junk, at) < (ssize_t) sizeof junk)
      break;
  fsync (ffd);
  for (int64_t at = 0; at < n; at += sizeof junk)
    {
      for (size_t i = 0; i < sizeof junk; i++)
	junk[i] = t_byte (21, at + (int64_t) i);
      wrote &= pwrite64 (fd, junk, sizeof junk, at) == (ssize_t) sizeof junk;
    }
  t_ok (wrote && fsync (fd) == 0 && t_same (fd, 0, (size_t) n, 21),
	"reserve: writes into the range succeed on a full filesystem");
  close (ffd);
  unlink (fpath);
out:
  close (fd);
  unlink (path);
}

int
main (int argc, char **argv)
{
  char path[4096];

  dir = argc > 1 ? argv[1] : ".";
  int fd = t_create (dir, "probe", path, sizeof path);
  fallback = t_filtered () || (fallocate (fd, 0, 0, 4096) == -1 && errno == EOPNOTSUPP);
  close (fd);
  unlink (path);
  printf ("# t-posix in %s (%s path)\n", dir, fallback ? "fallback" : "system call");
  errors ();
  scenarios ("O_RDWR", O_RDWR);
  scenarios ("O_WRONLY", O_WRONLY);
  scenarios ("O_APPEND", O_WRONLY | O_APPEND);
  /* The fallback writes through a second descriptor without O_*SYNC.  */
  scenarios ("O_DSYNC", O_RDWR | O_DSYNC);
  scenarios ("O_SYNC|O_APPEND", O_WRONLY | O_SYNC | O_APPEND);
  scenarios ("O_DIRECT", O_RDWR | O_DIRECT);
  scenarios ("O_DIRECT|O_APPEND", O_WRONLY | O_DIRECT | O_APPEND);
  no_largefile ();
  locks ();
  /* By the system call the failure comes before any write.  */
  if (fallback)
    append_then_fail ();
  enospc ();
  reserve ();
  return t_done ();
}
