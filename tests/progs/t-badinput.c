/* t-badinput DIR: posix_fallocate on every kind of bad descriptor and
   value gives the kernel's errno, whether the system call or the fallback
   answers, and writes nothing.

   Each case has the errno the kernel gives (vfs_fallocate's checks).  Run
   directly, the raw system call must give it (so the table is the
   kernel's word) and so must posix_fallocate; run under fa-seccomp, the
   fallback must give it.  A file that holds data is checked, after all
   cases, to have the same size, bytes, blocks and modification time.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <fallocate.h>
#include "tcheck.h"


static const char *dir;
static int filt, fallback, tried;
static char swap_path[4096];

/* posix_fallocate64 (FD, OFF, LEN) must give WANT, and the kernel too;
   WANT -2: whatever the kernel gives (known only by the system call).  */
static int
expect (const char *what, int fd, int64_t off, int64_t len, int want)
{
  int r = posix_fallocate64 (fd, off, len);

  tried++;
  if (want == -2)
    {
      long k = syscall (SYS_fallocate, fd, 0, off, len) ? errno : 0;
      t_ok (k == EOPNOTSUPP || k == filt || r == k,
	    "%s: as the kernel says, %ld (got %d)", what, k, r);
      return r;
    }
  if (!filt)
    {
      long k = syscall (SYS_fallocate, fd, 0, off, len) ? errno : 0;
      if (k != EOPNOTSUPP)
	t_ok (k == want, "%s: the kernel says %d (got %ld)",
	      what, want, k);
    }
  t_ok (r == want, "%s: %d (got %d)", what, want, r);
  return r;
}

struct snap
{
  struct stat64 st;
  unsigned seed;
};

static void
snap (int fd, struct snap *s)
{
  fsync (fd);
  fstat64 (fd, &s->st);
}

static void
same (int fd, const struct snap *s, const char *what)
{
  struct stat64 st;

  fsync (fd);
  fstat64 (fd, &st);
  t_ok (st.st_size == s->st.st_size && st.st_blocks == s->st.st_blocks
	&& st.st_mtim.tv_sec == s->st.st_mtim.tv_sec
	&& st.st_mtim.tv_nsec == s->st.st_mtim.tv_nsec
	&& t_same (fd, 0, 4096, s->seed) && t_same (fd, 65536, 4096, s->seed + 1)
	&& t_zero (fd, 4096, 65536 - 4096),
	"%s: nothing written (size %lld/%lld, blocks %lld/%lld, mtime %lld.%09ld/%lld.%09ld, bytes)",
	what, (long long) st.st_size, (long long) s->st.st_size,
	(long long) st.st_blocks, (long long) s->st.st_blocks,
	(long long) st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
	(long long) s->st.st_mtim.tv_sec, s->st.st_mtim.tv_nsec);
}

static int
data_file (const char *name, char *path, size_t size, unsigned seed)
{
  int fd = t_create (dir, name, path, size);

  t_put (fd, 0, 4096, seed);
  t_put (fd, 65536, 4096, seed + 1);
  return fd;
}

static volatile sig_atomic_t xfsz;

static void
count_xfsz (int sig)
{
  (void) sig;
  xfsz++;
}

/* expect, with RLIMIT_FSIZE at LIMIT: and no SIGXFSZ.  */
static void
expect_no_xfsz (const char *what, int fd, int64_t off, int64_t len, int want,
		rlim64_t limit)
{
  struct rlimit64 old, low;

  getrlimit64 (RLIMIT_FSIZE, &old);
  low = old;
  low.rlim_cur = limit;
  xfsz = 0;
  signal (SIGXFSZ, count_xfsz);
  setrlimit64 (RLIMIT_FSIZE, &low);
  expect (what, fd, off, len, want);
  setrlimit64 (RLIMIT_FSIZE, &old);
  signal (SIGXFSZ, SIG_DFL);
  t_ok (xfsz == 0, "%s: no SIGXFSZ (got %d)", what, (int) xfsz);
}

static void
descriptors (void)
{
  char path[4096], fifo[4096];
  struct snap s = { .seed = 60 };
  int fd = data_file ("bad", path, sizeof path, 60), p[2], sv[2];

  snap (fd, &s);
  int closed = open (path, O_RDONLY);
  close (closed);
  expect ("fd -1", -1, 0, 4096, EBADF);
  expect ("closed fd", closed, 0, 4096, EBADF);
  expect ("fd 1048576", 1 << 20, 0, 4096, EBADF);
  int ro = open (path, O_RDONLY), op = open (path, O_PATH);
  expect ("read-only fd", ro, 4096, 65536, EBADF);
  expect ("O_PATH fd", op, 4096, 65536, EBADF);
  int d = open (dir, O_RDONLY | O_DIRECTORY), dp = open (dir, O_PATH);
  expect ("directory", d, 0, 4096, EBADF);
  expect ("directory, O_PATH", dp, 0, 4096, EBADF);
  snprintf (fifo, sizeof fifo, "%s/bad-fifo", dir);
  unlink (fifo);
  if (mkfifo (fifo, 0600) == 0)
    {
      int f = open (fifo, O_RDWR);
      expect ("FIFO", f, 0, 4096, ESPIPE);
      close (f);
      unlink (fifo);
    }
  else
    t_unsupported ("FIFO: mkfifo: %s", strerror (errno));
  if (pipe (p) == 0)
    expect ("pipe", p[1], 0, 4096, ESPIPE);
  int so = socket (AF_INET, SOCK_STREAM, 0);
  expect ("socket", so, 0, 4096, ENODEV);
  if (socketpair (AF_UNIX, SOCK_DGRAM, 0, sv) == 0)
    expect ("socketpair", sv[0], 0, 4096, ENODEV);
  int nul = open ("/dev/null", O_WRONLY), zero = open ("/dev/zero", O_RDWR);
  expect ("/dev/null", nul, 0, 4096, ENODEV);
  expect ("/dev/zero", zero, 0, 4096, ENODEV);

  /* Values, on a writable file with data.  */
  expect ("offset -1", fd, -1, 4096, EINVAL);
  expect ("offset INT64_MIN", fd, INT64_MIN, 4096, EINVAL);
  expect ("len 0", fd, HI_OFF, 0, EINVAL);
  expect ("len -1", fd, HI_OFF, -1, EINVAL);
  expect ("len INT64_MIN", fd, 0, INT64_MIN, EINVAL);
  expect ("offset + len overflows", fd, INT64_MAX - 4095, HI_LEN, EFBIG);
  expect ("len INT64_MAX, offset 1", fd, 1, INT64_MAX, EFBIG);
  expect ("offset INT64_MAX, len 1", fd, INT64_MAX, 1, EFBIG);
  same (fd, &s, "bad descriptors and values");
  /* Past the filesystem's largest file (ext4's 16 TiB) EFBIG, else no
     space; lseek refuses the same offsets.  xfs and btrfs update the
     mtime before they find no space.  */
  int big = lseek64 (ro, 1LL << 50, SEEK_SET) < 0 && errno == EINVAL;
  expect ("1 PiB", fd, 0, 1LL << 50, big ? EFBIG : ENOSPC);
  /* Ending at INT64_MAX itself, where the largest file is smaller (lseek
     refuses the offset): EFBIG, not the ENOSPC of the free space.  */
  if (lseek64 (ro, INT64_MAX, SEEK_SET) < 0 && errno == EINVAL)
    {
      expect ("0 to INT64_MAX", fd, 0, INT64_MAX, EFBIG);
      expect ("1 to INT64_MAX", fd, 1, INT64_MAX - 1, EFBIG);
      /* The largest file is checked before RLIMIT_FSIZE: no SIGXFSZ,
	 also through an O_WRONLY descriptor (which cannot be mapped).  */
      int wfd = open (path, O_WRONLY);
      expect_no_xfsz ("0 to INT64_MAX, O_WRONLY, past RLIMIT_FSIZE", wfd, 0,
		      INT64_MAX, EFBIG, 1 << 30);
      close (wfd);
    }
  else
    t_unsupported ("0 to INT64_MAX: the largest file here reaches it");
  t_ok (t_size (fd) == s.st.st_size && t_same (fd, 0, 4096, 60)
	&& t_same (fd, 65536, 4096, 61), "1 PiB: size and bytes kept");
  close (ro);
  close (op);
  close (d);
  close (dp);
  close (so);
  close (nul);
  close (zero);
  close (fd);
  unlink (path);
}

/* The range ending at INT64_MAX: EFBIG where the filesystem's largest
   file is smaller (ext4), else allocated at the very top.  */
static void
top (void)
{
  char path[4096];
  int fd = t_create (dir, "top", path, sizeof path);
  int r = expect ("end at INT64_MAX", fd, INT64_MAX - 4096, 4096, -2);

  if (r == 0)
    t_ok (t_size (fd) == INT64_MAX && t_zero (fd, INT64_MAX - 4096, 4096),
	  "end at INT64_MAX: size INT64_MAX, zeros");
  else
    t_ok (r == EFBIG && t_size (fd) == 0, "end at INT64_MAX: EFBIG, size 0 (got %d)", r);
  close (fd);
  unlink (path);
}

/* Linux 5.1's seal; glibc 2.36 names it, musl 1.2.3 does not.  */
#define FUTURE_WRITE 0x0010

/* memfd: a tmpfs file like any other, until sealed.  */
static void
memfds (void)
{
  int m = memfd_create ("t-badinput", MFD_ALLOW_SEALING);

  if (m < 0)
    {
      t_unsupported ("memfd: memfd_create: %s", strerror (errno));
      return;
    }
  t_put (m, 0, 4096, 61);
  expect ("memfd", m, HI_OFF, SMALL_LEN, 0);
  t_ok (t_size (m) == HI_OFF + SMALL_LEN && t_same (m, 0, 4096, 61)
	&& t_zero (m, HI_OFF, SMALL_LEN),
	"memfd: size %lld, data kept", (long long) (HI_OFF + SMALL_LEN));
  ftruncate (m, 8192);
  fcntl (m, F_ADD_SEALS, F_SEAL_GROW);
  expect ("memfd sealed against growing, past its end", m, 4096, 8192, EPERM);
  expect ("memfd sealed against growing, inside", m, 0, 8192, 0);
  t_ok (t_size (m) == 8192 && t_same (m, 0, 4096, 61),
	"memfd sealed: size and data kept");
  close (m);

  /* F_SEAL_FUTURE_WRITE leaves a writable mapping made before it able to
     write, which may then fail for lack of space: allocated (the
     kernel), or EPERM where nothing may write (the fallback), never 0
     with holes.  */
  m = memfd_create ("t-badinput-future", MFD_ALLOW_SEALING);
  ftruncate (m, 1 << 20);
  char *w = mmap (NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0);
  int r = fcntl (m, F_ADD_SEALS, FUTURE_WRITE);
  if (w == MAP_FAILED || r < 0)
    t_unsupported ("memfd F_SEAL_FUTURE_WRITE: %s", strerror (errno));
  else
    {
      r = posix_fallocate64 (m, 0, 1 << 20);
      /* st_blocks: SEEK_HOLE finds fallocate's pages on tmpfs holes.  */
      int64_t a = t_alloc (m);
      t_ok (r == EPERM || (r == 0 && a >= 1 << 20), "memfd sealed "
	    "F_SEAL_FUTURE_WRITE, mapped writable before: allocated or EPERM "
	    "(got %d, %lld bytes allocated)", r, (long long) a);
      munmap (w, 1 << 20);
    }
  close (m);
}

static void
append_only (void)
{
  char path[4096];
  struct snap s = { .seed = 62 };
  int fd = data_file ("append", path, sizeof path, 62), e;

  snap (fd, &s);
  if ((e = t_attr (fd, FS_APPEND_FL, 1)))
    {
      t_unsupported ("append-only file: %s", strerror (e));
      close (fd);
      unlink (path);
      return;
    }
  int w = open (path, O_WRONLY);
  t_ok (w < 0 && errno == EPERM, "append-only file: open without O_APPEND fails");
  int a = open (path, O_WRONLY | O_APPEND);
  same (fd, &s, "append-only file, before");
  /* A hole inside: the kernel allocates it (mode 0 is allowed on an
     append-only file), the fallback cannot (it would have to write
     inside the file), and says EBADF as for any O_APPEND descriptor it
     cannot reopen without O_APPEND.  */
  expect ("append-only file, hole inside", a, 4096, 8192,
	  fallback ? EBADF : 0);
  /* Only data inside: nothing to write, so both succeed (the fallback
     must count the holes to know).  */
  expect ("append-only file, data inside", a, 0, 4096, 0);
  /* Past the end: both allocate, the fallback by appending.  */
  expect ("append-only file, past its end", a, t_size (fd), 8192, 0);
  t_ok (t_size (fd) == s.st.st_size + 8192 && t_same (fd, 0, 4096, 62)
	&& t_same (fd, 65536, 4096, 63), "append-only file: data kept, size %lld",
	(long long) s.st.st_size + 8192);
  t_attr (fd, FS_APPEND_FL, 0);
  close (a);
  close (fd);
  unlink (path);
}

static void
immutable (void)
{
  char path[4096];
  struct snap s = { .seed = 64 };
  int fd = data_file ("immutable", path, sizeof path, 64), e;

  snap (fd, &s);
  if ((e = t_attr (fd, FS_IMMUTABLE_FL, 1)))
    {
      t_unsupported ("immutable file: %s", strerror (e));
      close (fd);
      unlink (path);
      return;
    }
  /* The descriptor was opened for writing before the flag was set.  */
  expect ("immutable file, hole inside", fd, 4096, 8192, EPERM);
  expect ("immutable file, past its end", fd, 4096, HI_LEN, EPERM);
  same (fd, &s, "immutable file");
  t_attr (fd, FS_IMMUTABLE_FL, 0);
  close (fd);
  unlink (path);
}

static int blind;		/* the fallback on xfs: see swap_expect */

/* ETXTBSY for a call on an active swap file that writes nothing and
   would succeed; the fallback learns it from an empty write, which xfs
   answers before its swap check (its errors it checks against
   /proc/swaps).  */
static void
swap_expect (const char *what, int fd, int64_t off, int64_t len)
{
  if (blind)
    t_unsupported ("%s: xfs answers an empty write before its swap check, "
		   "so the fallback, which writes nothing here and has no "
		   "error to check, cannot tell", what);
  else
    expect (what, fd, off, len, ETXTBSY);
}

static void
swap_off (void)
{
  if (swap_path[0])
    swapoff (swap_path);
}

static void
swap_file (void)
{
  static char zeros[1 << 20];
  int fd = t_create (dir, "swap", swap_path, sizeof swap_path), st;

  /* A swap file has no holes: 4 MiB written, then mkswap.  */
  for (int i = 0; i < 4; i++)
    pwrite64 (fd, zeros, sizeof zeros, (int64_t) i << 20);
  fsync (fd);
  fchmod (fd, 0600);
  pid_t pid = fork ();
  if (pid == 0)
    {
      int null = open ("/dev/null", O_WRONLY);
      dup2 (null, 1);
      dup2 (null, 2);
      execlp ("mkswap", "mkswap", swap_path, (char *) NULL);
      _exit (127);
    }
  waitpid (pid, &st, 0);
  atexit (swap_off);
  if (!WIFEXITED (st) || WEXITSTATUS (st) != 0)
    t_unsupported ("active swap file: mkswap failed or is missing");
  else if (swapon (swap_path, 0) < 0)
    t_unsupported ("active swap file: swapon: %s", strerror (errno));
  else
    {
      struct stat64 before;
      fstat64 (fd, &before);
      struct statfs sf;
      blind = fallback && fstatfs (fd, &sf) == 0
	      && sf.f_type == XFS_SUPER_MAGIC;
      swap_expect ("active swap file, inside", fd, 0, 8192);
      expect ("active swap file, past its end", fd, 4 << 20, 8192, ETXTBSY);
      /* The swap check comes before the kernel looks at sizes, limits
	 and space: no SIGXFSZ either.  Through an O_WRONLY descriptor,
	 which the fallback cannot map: it checks the limit itself.  */
      int wfd = open (swap_path, O_WRONLY);
      expect_no_xfsz ("active swap file, past RLIMIT_FSIZE", wfd, 4 << 20,
		      8192, ETXTBSY, 1 << 20);
      /* No descriptor number left to the process (RLIMIT_NOFILE at the
	 lowest free one): where the fallback reads /proc/swaps (xfs), it
	 must not need one of the process's.  */
      int lowest = dup (fd);
      close (lowest);
      struct rlimit64 old, low, nold, nlow;
      getrlimit64 (RLIMIT_FSIZE, &old);
      low = old;
      low.rlim_cur = 1 << 20;
      getrlimit64 (RLIMIT_NOFILE, &nold);
      nlow = nold;
      nlow.rlim_cur = (rlim64_t) lowest;
      xfsz = 0;
      signal (SIGXFSZ, count_xfsz);
      setrlimit64 (RLIMIT_FSIZE, &low);
      setrlimit64 (RLIMIT_NOFILE, &nlow);
      int e1 = posix_fallocate64 (fd, 4 << 20, (int64_t) 1 << 40);
      int e2 = posix_fallocate64 (wfd, 4 << 20, 8192);
      setrlimit64 (RLIMIT_NOFILE, &nold);
      setrlimit64 (RLIMIT_FSIZE, &old);
      t_ok (e1 == ETXTBSY && e2 == ETXTBSY && xfsz == 0,
	    "active swap file, no descriptor left: ETXTBSY larger than the "
	    "free space (got %d) and past RLIMIT_FSIZE through O_WRONLY (got "
	    "%d), no SIGXFSZ (got %d)", e1, e2, (int) xfsz);
      close (wfd);
      signal (SIGXFSZ, SIG_DFL);
      expect ("active swap file, larger than the free space", fd, 4 << 20,
	      (int64_t) 1 << 40, ETXTBSY);
      expect ("active swap file, past the largest file", fd,
	      INT64_MAX - 8192, 8192, ETXTBSY);
      expect ("active swap file, offset + length overflows", fd,
	      INT64_MAX - 10, 8192, ETXTBSY);
      t_ok (t_size (fd) == before.st_size, "active swap file: size kept");
      swapoff (swap_path);
    }
  swap_path[0] = 0;
  close (fd);
  char p[4096];
  snprintf (p, sizeof p, "%s/swap", dir);
  unlink (p);
}

int
main (int argc, char **argv)
{
  dir = argc > 1 ? argv[1] : ".";
  filt = t_filtered ();
  char path[4096];
  int p = t_create (dir, "probe", path, sizeof path);
  fallback = filt || fallocate (p, 0, 0, 4096) != 0;
  close (p);
  unlink (path);
  printf ("# t-badinput in %s (%s)\n", dir, filt ? "fallback" : "system call");
  descriptors ();
  top ();
  memfds ();
  if (geteuid () == 0)
    {
      append_only ();
      immutable ();
      swap_file ();
    }
  else
    t_unsupported ("append-only, immutable and swap files: need root");
  printf ("# %d bad inputs tried\n", tried);
  return t_done ();
}
