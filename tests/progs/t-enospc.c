/* t-enospc DIR: posix_fallocate on a nearly full filesystem.  DIR is
   filled up to about 2 MiB free; requests around and above the free space
   must succeed or fail with ENOSPC, never change a byte that was there,
   and, when the fallback ran and failed, leave the size and the free space
   as they were.  What the system call leaves behind is the filesystem's
   business: it is printed ("# syscall ...") for the record, not judged.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

#define DATA 4096
#define LEFT (2 << 20)			/* free space left by the filler */

static int fd, fallback;
static char path[4096], hpath[4096], fpath[4096];

static void
cleanup (void)
{
  unlink (path);
  unlink (hpath);
  unlink (fpath);
}

static int64_t
avail (void)
{
  struct statvfs v;

  fsync (fd);
  syncfs (fd);
  return fstatvfs (fd, &v) == 0 ? (int64_t) (v.f_bfree * v.f_frsize) : -1;
}

/* One request of LEN from DATA in file F: DATA bytes, and if HOLE a hole
   of HOLE bytes and DATA bytes more.  ENOSPC or success, data kept.  */
static void
one (int f, const char *what, int64_t hole, int64_t len)
{
  fd = f;
  int64_t free0 = avail (), size0 = t_size (fd), off = DATA;
  int r = posix_fallocate64 (fd, off, len);
  int64_t size = t_size (fd), free1 = avail ();

  t_ok (r == 0 || r == ENOSPC, "%s: 0 or ENOSPC (got %d)", what, r);
  t_ok (t_same (fd, 0, DATA, 40) && (hole == 0 || t_same (fd, DATA + hole, DATA, 41)),
	"%s: data unchanged", what);
  if (r == 0)
    t_ok (size == (off + len > size0 ? off + len : size0),
	  "%s: success, size %lld", what, (long long) size);
  else if (fallback)
    {
      t_ok (size == size0, "%s: ENOSPC, size as before (%lld, was %lld)",
	    what, (long long) size, (long long) size0);
      /* Blocks filled in holes stay (as documented); past EOF nothing.  */
      t_ok (free1 >= free0 - hole - 65536,
	    "%s: ENOSPC, free space as before (%lld, was %lld)", what,
	    (long long) free1, (long long) free0);
    }
  if (r)
    printf ("# %s %s: ENOSPC, size %lld (was %lld), free %lld (was %lld)\n",
	    fallback ? "fallback" : "syscall", what, (long long) size,
	    (long long) size0, (long long) free1, (long long) free0);
  ftruncate64 (fd, size0);
}

int
main (int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : ".";
  static char junk[1 << 20];
  struct statvfs v;

  fd = t_create (dir, "enospc", path, sizeof path);
  if (fstatvfs (fd, &v) < 0 || (int64_t) v.f_blocks * v.f_frsize > (1LL << 30))
    {
      t_unsupported ("ENOSPC: not a small test filesystem");
      return 0;
    }
  fallback = t_filtered () || fallocate (fd, 0, 0, 1) != 0;
  ftruncate64 (fd, 0);
  t_put (fd, 0, DATA, 40);
  int hfd = t_create (dir, "enospc-hole", hpath, sizeof hpath);
  t_put (hfd, 0, DATA, 40);
  t_put (hfd, DATA + (64 << 10), DATA, 41);
  atexit (cleanup);
  int f = fd;

  /* The filler: 1 MiB writes, then smaller ones, to about LEFT free.  */
  /* btrfs counts space of its own in f_bfree: there the filler runs
     until a write fails, and the fallback meets ENOSPC part way.  */
  int ffd = t_create (dir, "filler", fpath, sizeof fpath);
  memset (junk, 0x55, sizeof junk);
  int64_t at = 0;
  for (int64_t n = (int64_t) sizeof junk; n >= 4096;)
    {
      int64_t room = avail () - LEFT;
      if (room < (int64_t) n)
	n /= 2;
      else if (pwrite64 (ffd, junk, (size_t) n, at) == n)
	at += n;
      else
	break;
    }
  int64_t free0 = avail ();
  printf ("# t-enospc %s (%s path): %lld bytes free\n", dir,
	  fallback ? "fallback" : "system call", (long long) free0);

  one (f, "8 MiB more than free", 0, free0 + (8 << 20));
  for (int64_t d = -(256 << 10); d <= (256 << 10); d += 64 << 10)
    {
      char what[64];
      snprintf (what, sizeof what, "free %+lld KiB", (long long) (d >> 10));
      one (f, what, 0, avail () + d);
    }
  /* A hole inside the file, then the extension: the hole's blocks may
     stay, the extension must go.  */
  one (hfd, "hole and more than free", 64 << 10, avail () + (1 << 20));
  /* Past RLIMIT_FSIZE and larger than the free space: the kernel checks
     the limit first (EFBIG; SIGXFSZ, ignored here).  */
  pid_t pid = fork ();
  if (pid == 0)
    {
      struct rlimit r = { 64 << 10, 64 << 10 };
      signal (SIGXFSZ, SIG_IGN);
      setrlimit (RLIMIT_FSIZE, &r);
      _exit (posix_fallocate64 (f, DATA, avail () + (8 << 20)));
    }
  int st;
  waitpid (pid, &st, 0);
  t_ok (WIFEXITED (st) && WEXITSTATUS (st) == EFBIG,
	"past RLIMIT_FSIZE and larger than free: EFBIG, the limit first "
	"(got %d)", WIFEXITED (st) ? WEXITSTATUS (st) : -1);
  t_ok (t_size (f) == DATA, "... the size as before");
  /* Full: a call of at most 1 MiB, all past the end of file, may have
     no check before its write (fa-file.c, statfs_of): the write fails,
     and is undone.  */
  for (int64_t n = (int64_t) sizeof junk; n >= 512;)
    if (pwrite64 (ffd, junk, (size_t) n, at) == n)
      at += n;
    else
      n /= 2;
  one (f, "full, 4 KiB past the end", 0, 4096);
  one (f, "full, 1 MiB past the end", 0, 1 << 20);
  return t_done ();
}
