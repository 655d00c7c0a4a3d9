/* t-edge DIR: the fallback at the edges a review found (run under
   fa-seccomp, so that the fallback runs):
   - fork: a child forked while another thread is inside a call of ours
     (rounds until the fork lands inside, which is checked)
     can make calls of its own (the lock is not inherited held);
   - signal: a call from a signal handler that interrupted a call of ours
     on a file of the same lock stripe returns (rounds until it lands
     inside);
   - fsize: past RLIMIT_FSIZE, EFBIG and SIGXFSZ before anything changes,
     through descriptors whose writes would otherwise grow the file to the
     limit first;
   - append past the end: an O_APPEND descriptor and a range starting past
     the end of file need only the range's space, not the gap's;
   - extension race: another writer extending the file while the fallback
     extends it through an O_WRONLY descriptor is no reason to fail;
   - efbig: EFBIG exactly where the kernel says it, one byte past the
     filesystem's largest file;
   - gap: 24 MiB past the end of file from one page past an 8 MiB
     boundary: the page before the range stays a hole (the fallback's
     huge folios start at the range's first huge boundary, not before),
     the range has none, the data before is unchanged;
   - outside: a sparse 64 MiB file (data in its first and last 4 KiB),
     read through first (the page cache then holds large folios), a
     4 KiB call at 10 MiB + 4 KiB; and on a new one [4 MiB + 8 KiB,
     24 MiB + 12 KiB): only the range becomes data (a fault marks its
     whole folio for writeback: 1 MiB was allocated for the 4 KiB);
   - across: an 80 MiB sparse file with data at [73, 75) MiB and
     [79, 80) MiB, [60 MiB, 77 MiB + 4 KiB) allocated: nothing past its
     end (the window mapped again lost its advice: 12 KiB were);
   - pages: 2 KiB at 5 KiB inside a sparse file, and past the end of an
     8 KiB file at 13 KiB: exactly the blocks of the range, where
     blocks are smaller than a page too (ext2's 1 KiB: a fault
     allocated the whole page);
   - ends: a 4 KiB hole inside a file, with RLIMIT_FSIZE below the hole,
     and through an O_RDWR|O_DIRECT descriptor whose open file holds a
     write lease: allocated, as by the kernel (an earlier fix wrote the
     range's ends, which gave EFBIG and EBADF there).  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <fallocate.h>
#include "tcheck.h"

static const char *dir;
static int big;
static atomic_int inside;

static atomic_int returned;

static void *
long_call (void *arg)
{
  (void) arg;
  atomic_store (&inside, 1);
  posix_fallocate64 (big, 0, 24 << 20);
  atomic_store (&returned, 1);
  return NULL;
}

/* A child's call on FD, forked now: its wait status, or -1 if it did not
   end within 60 s (valgrind on a loaded machine is slow; a deadlock is
   forever).  *DURING: whether the other thread's call had not returned
   when the child was forked.  */
static int
in_child (int fd, int *during)
{
  pid_t pid = fork ();
  int st;

  *during = !atomic_load (&returned);
  if (pid == 0)
    {
      alarm (60);
      int r = posix_fallocate64 (fd, 0, 4096);
      if (r)
	printf ("# child: posix_fallocate64 returned %d\n", r);
      _exit (r == 0 ? 0 : 1);
    }
  waitpid (pid, &st, 0);
  return st;
}

/* Rounds until the fork lands inside the long call, which has begun
   writing (the size has grown) and not returned: a round where it
   returned first proves nothing and is made again.  */
static void
forked (void)
{
  char p1[4096], p2[4096];
  pthread_t t;
  int st = 0, during = 0, round = 0;

  while (round < 20 && !during)
    {
      round++;
      big = t_create (dir, "forkbig", p1, sizeof p1);
      int small = t_sibling (dir, big, p2, sizeof p2);
      if (small < 0)
	{
	  close (big);
	  unlink (p1);
	  t_unsupported ("fork: no file of the same lock stripe in 256");
	  return;
	}
      atomic_store (&inside, 0);
      atomic_store (&returned, 0);
      pthread_create (&t, NULL, long_call, NULL);
      while (!atomic_load (&inside) || t_size (big) == 0)
	usleep (100);
      st = in_child (small, &during);
      pthread_join (t, NULL);
      close (small);
      close (big);
      unlink (p1);
      unlink (p2);
      if (!(WIFEXITED (st) && WEXITSTATUS (st) == 0))
	break;
    }
  if (!during)
    t_unsupported ("fork: the other thread's call returned before the fork "
		   "in %d rounds", round);
  else
    t_ok (WIFEXITED (st) && WEXITSTATUS (st) == 0,
	  "fork: a child forked during another thread's call can call "
	  "(round %d, status 0x%x)", round, st);
}

static int handler_fd, handler_ret = -1;
static volatile sig_atomic_t calling, handler_during;

static void
handler (int sig)
{
  (void) sig;
  handler_during = calling;
  handler_ret = posix_fallocate64 (handler_fd, 0, 4096);
}

/* SIGALRM to the main thread once the long call has begun writing.  */
static void *
poke (void *arg)
{
  while (t_size (big) == 0 && calling)
    usleep (100);
  pthread_kill (*(pthread_t *) arg, SIGALRM);
  return NULL;
}

/* In a child, rounds until the signal lands inside the long call (one
   where it came after proves nothing); exit 0 if then both calls
   returned 0, 1 if not, 2 if it never landed inside.  */
static void
signalled (void)
{
  char p1[4096], p2[4096];
  pid_t pid = fork ();
  int st;

  if (pid == 0)
    {
      pthread_t self = pthread_self (), t;
      int r = -1;

      signal (SIGALRM, handler);
      for (int round = 0; round < 20 && !handler_during; round++)
	{
	  big = t_create (dir, "sigbig", p1, sizeof p1);
	  handler_fd = t_sibling (dir, big, p2, sizeof p2);
	  if (handler_fd < 0)
	    _exit (3);
	  handler_ret = -1;
	  calling = 1;
	  pthread_create (&t, NULL, poke, &self);
	  r = posix_fallocate64 (big, 0, 24 << 20);
	  calling = 0;
	  pthread_join (t, NULL);
	  close (handler_fd);
	  close (big);
	  unlink (p1);
	  unlink (p2);
	}
      if (handler_during)
	printf ("# signal: call %d, from the handler %d\n", r, handler_ret);
      _exit (!handler_during ? 2 : r == 0 && handler_ret == 0 ? 0 : 1);
    }
  /* A deadlock is killed, not waited for.  */
  for (int i = 0; i < 1200 && waitpid (pid, &st, WNOHANG) == 0; i++)
    usleep (50000);
  if (waitpid (pid, &st, WNOHANG) == 0)
    {
      kill (pid, SIGKILL);
      waitpid (pid, &st, 0);
    }
  if (WIFEXITED (st) && WEXITSTATUS (st) == 2)
    t_unsupported ("signal: the signal came after the call in 20 rounds");
  else if (WIFEXITED (st) && WEXITSTATUS (st) == 3)
    t_unsupported ("signal: no file of the same lock stripe in 256");
  else
    t_ok (WIFEXITED (st) && WEXITSTATUS (st) == 0,
	  "signal: a call from a handler on a file of the same stripe "
	  "returns (status 0x%x)", st);
}

static int64_t
t_size_path (const char *path)
{
  struct stat64 st;
  return stat64 (path, &st) == 0 ? st.st_size : -1;
}

static void
fsize (int flags, const char *how)
{
  char path[4096];
  int fd = t_create (dir, "fsize", path, sizeof path);
  pid_t pid;
  int st;

  close (fd);
  /* SIGXFSZ at its default (the process ends), then ignored (EFBIG).  */
  for (int ignore = 0; ignore < 2; ignore++)
    {
      if ((pid = fork ()) == 0)
	{
	  struct rlimit r = { 1 << 20, 1 << 20 }, none = { 0, 0 };
	  setrlimit (RLIMIT_CORE, &none);
	  setrlimit (RLIMIT_FSIZE, &r);
	  if (ignore)
	    signal (SIGXFSZ, SIG_IGN);
	  int f = open (path, flags | O_LARGEFILE);
	  _exit (posix_fallocate64 (f, 0, 4 << 20) == EFBIG ? 0 : 1);
	}
      waitpid (pid, &st, 0);
      t_ok ((ignore ? WIFEXITED (st) && WEXITSTATUS (st) == 0
	     : WIFSIGNALED (st) && WTERMSIG (st) == SIGXFSZ)
	    && t_size_path (path) == 0,
	    "fsize %s, SIGXFSZ %s: %s, size 0 as before (size %lld)", how,
	    ignore ? "ignored" : "default", ignore ? "EFBIG" : "killed by it",
	    (long long) t_size_path (path));
    }
  unlink (path);
}

static void
append_past_end (void)
{
  char path[4096];
  struct statvfs v;
  int fd = t_create (dir, "apppast", path, sizeof path);

  t_put (fd, 0, 4096, 60);
  if (fstatvfs (fd, &v) < 0)
    return;
  /* A gap larger than the free space, a range well within it.  */
  int64_t gap = (int64_t) v.f_bfree * (int64_t) v.f_frsize + (1 << 30);
  int64_t len = (int64_t) v.f_bavail * (int64_t) v.f_frsize / 4;
  if (len > (8 << 20))
    len = 8 << 20;
  int a = open (path, O_WRONLY | O_APPEND | O_LARGEFILE);
  int r = posix_fallocate64 (a, gap, len);
  t_ok (r == 0 && t_size (fd) == gap + len && t_same (fd, 0, 4096, 60),
	"append past the end: only the range's space counts (got %d)", r);
  close (a);
  close (fd);
  unlink (path);
}

static int race_fd;
static atomic_int race_go;

static void *
extender (void *arg)
{
  (void) arg;
  while (!atomic_load (&race_go))
    ;
  while (t_size (race_fd) == 0)
    ;
  pwrite64 (race_fd, "X", 1, t_size (race_fd) + (2 << 20));
  return NULL;
}

static void
extension_race (void)
{
  char path[4096];
  int failed = 0, lost = 0, short_ = 0;

  for (int i = 0; i < 10; i++)
    {
      pthread_t t;
      race_fd = t_create (dir, "extrace", path, sizeof path);
      int w = open (path, O_WRONLY | O_LARGEFILE);
      atomic_store (&race_go, 0);
      pthread_create (&t, NULL, extender, NULL);
      atomic_store (&race_go, 1);
      int r = posix_fallocate64 (w, 0, 16 << 20);
      pthread_join (t, NULL);
      failed += r != 0;
      /* The writer's byte, wherever it went, is still there.  */
      char c = 0;
      int64_t size = t_size (race_fd);
      lost += pread64 (race_fd, &c, 1, size - 1) != 1
	      || (size > (16 << 20) && c != 'X');
      /* 0 promises the range: a call that stopped short (lseek's ENXIO
	 past the end of file, and xfs's preallocation there, once read
	 as "no hole") returned 0 with the file far shorter.  */
      short_ += r == 0 && size < (16 << 20);
      close (w);
      close (race_fd);
      unlink (path);
    }
  t_ok (failed == 0 && lost == 0, "extension race, O_WRONLY: returns 0, "
	"the other writer's byte kept (%d failed, %d lost)", failed, lost);
  t_ok (short_ == 0, "extension race, O_WRONLY: the size reaches the "
	"range's end (%d calls short)", short_);
}

/* The smallest start FIEMAP refuses with EFBIG: s_maxbytes + 1, or -1.  */
static int64_t
fiemap_limit (int fd)
{
  struct fiemap m;
  int64_t lo = 1, hi = INT64_MAX;

  while (lo < hi)
    {
      int64_t mid = lo + (hi - lo) / 2;
      memset (&m, 0, sizeof m);
      m.fm_start = (uint64_t) mid;
      m.fm_length = 1;
      int r = ioctl (fd, FS_IOC_FIEMAP, &m) < 0 ? errno : 0;
      /* From s_maxbytes itself nothing is left to map: EINVAL.  */
      if (r != 0 && r != EFBIG && r != EINVAL)
	{
	  printf ("# efbig: FIEMAP from %lld: %s\n", (long long) mid,
		  strerror (r));
	  return -1;
	}
      if (r == EFBIG)
	hi = mid;
      else
	lo = mid + 1;
    }
  return lo;
}

static void
efbig (void)
{
  char path[4096];
  int fd = t_create (dir, "efbig", path, sizeof path);
  int64_t over = fiemap_limit (fd);

  if (over < 0 || over == INT64_MAX)
    t_unsupported ("efbig: no FIEMAP, or no limit below INT64_MAX here");
  else
    {
      /* END = s_maxbytes + 1: the kernel's vfs_fallocate says EFBIG,
	 before it looks at the free space, which LEN exceeds.  */
      struct statvfs v;
      int64_t len = fstatvfs (fd, &v) == 0
		    ? (int64_t) v.f_bfree * (int64_t) v.f_frsize + (1 << 30)
		    : 1 << 30;
      int r = posix_fallocate64 (fd, over - len, len);
      t_ok (r == EFBIG && t_size (fd) == 0, "efbig: one byte past the "
	    "largest file (%lld): EFBIG (got %d)", (long long) over, r);
    }
  close (fd);
  unlink (path);
}

static void
gap (void)
{
  char path[4096];
  int fd = t_create (dir, "gap", path, sizeof path);
  const int64_t size0 = (1 << 20) + 123, off = (8 << 20) + 4096;
  const int64_t len = 24 << 20;

  t_put (fd, 0, (size_t) size0, 61);
  int r = posix_fallocate64 (fd, off, len);
  int64_t d = lseek64 (fd, off - 4096, SEEK_DATA);
  t_ok (r == 0 && t_size (fd) == off + len
	&& t_same (fd, 0, (size_t) size0, 61) && d == off
	&& t_nohole (fd, off, len),
	"gap: 24 MiB from 8 MiB + 4 KiB past the end (%lld): 0 (got %d), "
	"the page before still a hole (data from %lld), none in the range, "
	"data kept", (long long) size0, r, (long long) d);
  close (fd);
  unlink (path);
}

/* Bytes of FD that are data outside [OFF, OFF + LEN), besides its first
   and last 4 KiB (synced first: SEEK_DATA then reports allocations).  */
static int64_t
data_outside (int fd, int64_t off, int64_t len)
{
  int64_t n = 0, size = t_size (fd);

  fsync (fd);
  for (off64_t p = 0, d, h; (d = lseek64 (fd, p, SEEK_DATA)) >= 0; p = h)
    {
      h = lseek64 (fd, d, SEEK_HOLE);
      for (int64_t b = d; b < h; b += 4096)
	n += (b < off - off % 4096 || b >= off + len)
	     && b != 0 && b != size - 4096 ? 4096 : 0;
    }
  return n;
}

static void
outside (void)
{
  static char buf[1 << 20];
  const int64_t size = 64 << 20;
  const int64_t ranges[][2] = { { (10 << 20) + 4096, 4096 },
				{ (4 << 20) + 8192, (20 << 20) + 4096 } };

  for (int i = 0; i < 2; i++)
    {
      char path[4096];
      int fd = t_create (dir, "outside", path, sizeof path);

      t_put (fd, 0, 4096, 62);
      t_put (fd, size - 4096, 4096, 63);
      fsync (fd);
      if (i == 0)
	while (read (fd, buf, sizeof buf) > 0)
	  ;
      int r = posix_fallocate64 (fd, ranges[i][0], ranges[i][1]);
      int64_t n = data_outside (fd, ranges[i][0], ranges[i][1]);
      t_ok (r == 0 && n == 0 && t_nohole (fd, ranges[i][0], ranges[i][1])
	    && t_same (fd, 0, 4096, 62) && t_same (fd, size - 4096, 4096, 63)
	    && t_size (fd) == size,
	    "outside: %lld bytes from %lld in a sparse file%s: 0 (got %d), "
	    "nothing allocated outside the range (got %lld bytes), data kept",
	    (long long) ranges[i][1], (long long) ranges[i][0],
	    i == 0 ? " read through first" : "", r, (long long) n);
      close (fd);
      unlink (path);
    }
}

static void
across (void)
{
  char path[4096];
  int fd = t_create (dir, "across", path, sizeof path);
  const int64_t off = 60 << 20, len = (17 << 20) + 4096;

  t_put (fd, 73 << 20, 2 << 20, 65);
  t_put (fd, 79 << 20, 1 << 20, 66);
  fsync (fd);
  int r = posix_fallocate64 (fd, off, len);
  fsync (fd);
  int64_t before = lseek64 (fd, 0, SEEK_DATA);
  int64_t after = lseek64 (fd, off + len, SEEK_DATA);
  t_ok (r == 0 && before == off && after == 79 << 20
	&& t_nohole (fd, off, len) && t_same (fd, 73 << 20, 2 << 20, 65)
	&& t_same (fd, 79 << 20, 1 << 20, 66),
	"across: [60 MiB, 77 MiB + 4 KiB) of an 80 MiB sparse file: 0 (got "
	"%d), data from %lld (want %lld), next past the range at %lld (want "
	"%lld), data kept", r, (long long) before, (long long) off,
	(long long) after, 79LL << 20);
  close (fd);
  unlink (path);
}

/* Exactly the blocks of [OFF, OFF + LEN) are data in FD's file, of
   blocks of BS bytes (SEEK_HOLE finds the end of file at the latest).  */
static int
only (int fd, int64_t off, int64_t len, int64_t bs)
{
  int64_t end = (off + len + bs - 1) / bs * bs, size = t_size (fd);

  fsync (fd);
  return lseek64 (fd, 0, SEEK_DATA) == off - off % bs
	 && lseek64 (fd, off, SEEK_HOLE) == (end < size ? end : size);
}

static void
pages (void)
{
  char path[4096];
  int fd = t_create (dir, "pages", path, sizeof path);
  struct statvfs v;
  int64_t bs = fstatvfs (fd, &v) == 0 ? (int64_t) v.f_bsize : 4096;

  ftruncate (fd, 16 << 20);
  int r = posix_fallocate64 (fd, 5120, 2048);
  t_ok (r == 0 && only (fd, 5120, 2048, bs), "pages: 2 KiB at 5 KiB of a "
	"sparse file, blocks of %lld: 0 (got %d), exactly the range's "
	"blocks are data", (long long) bs, r);
  /* An end of file on a block's boundary: btrfs writes zeros into the
     rest of the block that holds it when the file grows.  */
  ftruncate (fd, 0);
  ftruncate (fd, 8192);
  r = posix_fallocate64 (fd, 13312, 2048);
  t_ok (r == 0 && only (fd, 13312, 2048, bs) && t_size (fd) == 15360,
	"pages: 2 KiB at 13 KiB past the end of an 8 KiB file, blocks of "
	"%lld: 0 (got %d), exactly the range's blocks are data", (long long) bs,
	r);
  close (fd);
  unlink (path);
}

static void
ends (void)
{
  char path[4096];
  int fd = t_create (dir, "ends", path, sizeof path);
  const int64_t off = 40 << 20;

  t_put (fd, 0, 4096, 64);
  ftruncate (fd, 64 << 20);
  /* Past the limit a write would raise SIGXFSZ: ignored, it says EFBIG
     instead of ending the program.  */
  struct rlimit old, low = { 1 << 20, RLIM_INFINITY };
  void (*was) (int) = signal (SIGXFSZ, SIG_IGN);
  getrlimit (RLIMIT_FSIZE, &old);
  low.rlim_max = old.rlim_max;
  setrlimit (RLIMIT_FSIZE, &low);
  int r = posix_fallocate64 (fd, off, 4096);
  setrlimit (RLIMIT_FSIZE, &old);
  signal (SIGXFSZ, was);
  t_ok (r == 0 && t_nohole (fd, off, 4096) && t_size (fd) == 64 << 20,
	"ends: a 4 KiB hole at 40 MiB, RLIMIT_FSIZE 1 MiB: allocated (got "
	"%d), size kept", r);
  close (fd);

  int d = open (path, O_RDWR | O_DIRECT);
  if (d < 0 || fcntl (d, F_SETLEASE, F_WRLCK) < 0)
    t_unsupported ("ends: O_DIRECT with a write lease: %s", strerror (errno));
  else
    {
      r = posix_fallocate64 (d, off + 8192, 4096);
      t_ok (r == 0 && t_nohole (d, off + 8192, 4096),
	    "ends: a 4 KiB hole through O_RDWR|O_DIRECT, its open file "
	    "holding a write lease: allocated (got %d)", r);
      fcntl (d, F_SETLEASE, F_UNLCK);
    }
  if (d >= 0)
    close (d);
  unlink (path);
}

int
main (int argc, char **argv)
{
  dir = argc > 1 ? argv[1] : ".";
  if (!t_filtered ())
    {
      t_unsupported ("t-edge: run it under fa-seccomp");
      return 0;
    }
  forked ();
  signalled ();
  fsize (O_RDWR, "O_RDWR");
  fsize (O_WRONLY, "O_WRONLY");
  fsize (O_WRONLY | O_APPEND, "O_APPEND");
  append_past_end ();
  extension_race ();
  efbig ();
  gap ();
  outside ();
  across ();
  pages ();
  ends ();
  return t_done ();
}
