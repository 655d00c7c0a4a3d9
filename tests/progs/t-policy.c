/* t-policy DIR [ERRNO]: fallocate-shim's policies, as FALLOCATE_SHIM_POLICY and
   FALLOCATE_SHIM_TRACE set them for this run (the library reads them when
   the program starts; this program reads them to know what to expect).

   emulate: every mode that can be emulated gives the result the kernel
   gives, whether the kernel does it or the emulation does (under
   fa-seccomp every call is refused and emulated); bytes outside the range
   never change; the rest keep the refusal.  noop: nothing happens and
   every call succeeds.  An errno: every call fails with it, nothing
   happens.  FALLOCATE_SHIM_TRACE: one exact line per call.  ERRNO: the
   one fa-seccomp makes the system call fail with, if it runs under it.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

#define K 1024
#define SIZE (192 * K)		/* data A [0, 64K), hole, data B [128K, 192K) */
#define A 71
#define B 72
#define MARK 4242

static const char *dir;
static int filt;		/* what fa-seccomp makes the kernel say, or 0 */

/* A new file of the layout above.  */
static int
layout (const char *name, char *path, size_t size)
{
  int fd = t_create (dir, name, path, size);

  t_put (fd, 0, 64 * K, A);
  t_put (fd, 128 * K, 64 * K, B);
  return fd;
}

/* The bytes of the layout in [FROM, TO) as they were, and zeros past its
   end (the first MiB of them: a range may end beyond 4 GiB).  */
static int
kept (int fd, int64_t from, int64_t to)
{
  static const struct { int64_t at, end; unsigned seed; } seg[] = {
    { 0, 64 * K, A }, { 64 * K, 128 * K, 0 }, { 128 * K, SIZE, B },
    { SIZE, SIZE + 1024 * K, 0 },
  };
  int64_t size = t_size (fd);
  int ok = 1;

  for (size_t i = 0; i < sizeof seg / sizeof seg[0]; i++)
    {
      int64_t a = from > seg[i].at ? from : seg[i].at;
      int64_t b = to < seg[i].end ? to : seg[i].end;

      b = b < size ? b : size;
      if (a < b)
	ok &= seg[i].seed ? t_same (fd, a, (size_t) (b - a), seg[i].seed)
			  : t_zero (fd, a, (size_t) (b - a));
    }
  return ok;
}

/* Bytes of [FROM, TO) in the layout's hole or past its end.  */
static int64_t
new_space (int64_t from, int64_t to)
{
  int64_t a = from > 64 * K ? from : 64 * K, b = to < 128 * K ? to : 128 * K;
  int64_t n = a < b ? b - a : 0;

  a = from > SIZE ? from : SIZE;
  return n + (to > a ? to - a : 0);
}

static int
fa (int fd, int mode, int64_t off, int64_t len)
{
  return fallocate64 (fd, mode, off, len) ? errno : 0;
}

/* MODE over [OFF, OFF + LEN) of a new layout file; it must succeed and
   leave size WANT_SIZE, zeros in [ZFROM, ZTO), the rest as it was.  */
static void
zeroing (const char *what, int mode, int64_t off, int64_t len,
	 int64_t want_size, int64_t zfrom, int64_t zto, int flags)
{
  char path[4096];
  int fd = layout ("zero", path, sizeof path), wfd = fd;
  int64_t alloc0 = t_alloc (fd);

  if (flags && (wfd = open (path, O_WRONLY | flags)) < 0)
    t_ok (0, "%s: open: %s", what, strerror (errno));
  int r = fa (wfd, mode, off, len);

  t_ok (r == 0, "%s: succeeds (got %s)", what, strerror (r));
  t_ok (t_size (fd) == want_size, "%s: size %lld (got %lld)", what,
	(long long) want_size, (long long) t_size (fd));
  t_ok (t_zero (fd, zfrom, zto - zfrom), "%s: [%lld, %lld) reads zeros",
	what, (long long) zfrom, (long long) zto);
  t_ok (kept (fd, 0, zfrom) && kept (fd, zto, t_size (fd)),
	"%s: every byte outside kept", what);
  if (zfrom > SIZE + 64 * K)
    {
      /* The gap between the old end and the range stays a hole.  */
      int64_t d = lseek64 (fd, SIZE + 64 * K, SEEK_DATA);
      t_ok (d < 0 || d >= zfrom - 64 * K, "%s: no data before %lld (got %lld)",
	    what, (long long) zfrom, (long long) d);
    }
  if (mode & FALLOC_FL_PUNCH_HOLE)
    t_ok (t_alloc (fd) <= alloc0, "%s: nothing allocated (%lld, was %lld)",
	  what, (long long) t_alloc (fd), (long long) alloc0);
  else if (!(mode & FALLOC_FL_KEEP_SIZE))
    t_ok (t_alloc (fd) >= 128 * K + new_space (zfrom, zto),
	  "%s: range allocated (%lld bytes)", what, (long long) t_alloc (fd));
  if (wfd != fd)
    close (wfd);
  close (fd);
  unlink (path);
}

/* The errno of a refusal by the kernel: fa-seccomp's, or the
   filesystem's.  */
static int
refusal (void)
{
  return filt ? filt : EOPNOTSUPP;
}

/* An O_APPEND descriptor while the process holds a record lock (no
   descriptor of ours may be opened, so nothing can be written inside the
   file), and an append-only file: done, or refused as the kernel
   refused, never a made-up EBADF.  */
static void
locked_append (void)
{
  char path[4096];
  struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 100 };
  int fd = layout ("locked", path, sizeof path), attr, r;
  int ap = open (path, O_RDWR | O_APPEND);

  if (fcntl (ap, F_SETLK, &lk) < 0)
    t_ok (0, "F_SETLK: %s", strerror (errno));
  r = fa (ap, FALLOC_FL_ZERO_RANGE, 0, 4096);
  t_ok (r == 0 ? t_zero (fd, 0, 4096) && kept (fd, 4096, SIZE)
	: r == refusal () && kept (fd, 0, SIZE),
	"ZERO_RANGE, O_APPEND, locked: done or refused (got %s)",
	strerror (r));
  close (ap);
  close (fd);

  fd = layout ("locked", path, sizeof path);
  ap = open (path, O_WRONLY | O_APPEND);
  if (ioctl (fd, FS_IOC_GETFLAGS, &attr) < 0
      || (attr |= FS_APPEND_FL, ioctl (fd, FS_IOC_SETFLAGS, &attr)) < 0)
    t_unsupported ("append-only file: %s", strerror (errno));
  else
    {
      r = fa (ap, FALLOC_FL_KEEP_SIZE, 0, SIZE);
      t_ok ((r == 0 || r == refusal ()) && kept (fd, 0, SIZE),
	    "KEEP_SIZE, append-only file with a hole: done or refused "
	    "(got %s)", strerror (r));
      r = fa (ap, FALLOC_FL_ZERO_RANGE, 0, 4096);
      t_ok (r == EPERM && kept (fd, 0, SIZE),
	    "ZERO_RANGE, append-only file: EPERM (got %s)", strerror (r));
      attr &= ~FS_APPEND_FL;
      ioctl (fd, FS_IOC_SETFLAGS, &attr);
    }
  close (ap);
  close (fd);
  unlink (path);
}

/* A thread whose cancellation is pending (deferred) calls fallocate
   PUNCH_HOLE|KEEP_SIZE, emulated where refused: the call returns, as
   the kernel's, which is no cancellation point.  */
static int cancel_fd, cancel_ret = -2;

static void
cancel_call (void)
{
  cancel_ret = fallocate (cancel_fd, FALLOC_FL_PUNCH_HOLE
			  | FALLOC_FL_KEEP_SIZE, 0, 4096);
}

static void
cancel (void)
{
  char path[4096];

  cancel_fd = t_create (dir, "cancel", path, sizeof path);
  ftruncate (cancel_fd, SIZE);
  int reached = t_cancel_pending (cancel_call);
  t_ok (reached, "emulate: a pending cancellation not acted on in "
	"fallocate (%s, fallocate %d)", reached ? "returned"
	: "cancelled inside", cancel_ret);
  close (cancel_fd);
  unlink (path);
}

/* Under off: statically linked, fallocate is the system call alone (no
   C library's to find), so no cancellation point, as libfallocate(3)
   says; linked dynamically (make check-asan, check-valgrind), it is
   glibc's, a cancellation point (and so preloaded: t-preload).  */
static void
off (void)
{
  char path[4096];
  int linked_static = getauxval (AT_BASE) == 0;

  if (!linked_static && t_asan ())
    {
      t_unsupported ("off, linked dynamically: glibc's fallocate cancelled "
		     "inside, which ASan cannot follow");
      return;
    }
  cancel_fd = t_create (dir, "cancel", path, sizeof path);
  ftruncate (cancel_fd, SIZE);
  int reached = t_cancel_pending (cancel_call);
  t_ok (reached == linked_static, "off, linked %s: fallocate %s "
	"(fallocate %d, %s)", linked_static ? "statically" : "dynamically",
	linked_static ? "the system call, not a cancellation point"
	: "glibc's, a cancellation point", cancel_ret,
	reached ? "returned" : "cancelled inside");
  close (cancel_fd);
  unlink (path);
}

static void
emulate (void)
{
  char path[4096];
  int fd;

  cancel ();
  /* Across data A's end, the hole and data B's start.  */
  zeroing ("ZERO_RANGE", FALLOC_FL_ZERO_RANGE, 60 * K, 72 * K, SIZE,
	   60 * K, 132 * K, 0);
  zeroing ("ZERO_RANGE on O_APPEND", FALLOC_FL_ZERO_RANGE, 60 * K, 72 * K,
	   SIZE, 60 * K, 132 * K, O_APPEND);
  zeroing ("ZERO_RANGE past the end", FALLOC_FL_ZERO_RANGE, 176 * K,
	   32 * K, 208 * K, 176 * K, 208 * K, 0);
  zeroing ("ZERO_RANGE beyond 4 GiB", FALLOC_FL_ZERO_RANGE, HI_OFF,
	   SMALL_LEN, HI_OFF + SMALL_LEN, HI_OFF, HI_OFF + SMALL_LEN, 0);
  zeroing ("ZERO_RANGE|KEEP_SIZE past the end",
	   FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 176 * K, 32 * K, SIZE,
	   176 * K, SIZE, 0);
  zeroing ("PUNCH_HOLE|KEEP_SIZE", FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
	   32 * K, 128 * K, SIZE, 32 * K, 160 * K, 0);
  zeroing ("PUNCH_HOLE|KEEP_SIZE past the end, 4 GiB+ len",
	   FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 160 * K, HI_LEN, SIZE,
	   160 * K, SIZE, O_APPEND);
  zeroing ("WRITE_ZEROES", FALLOC_FL_WRITE_ZEROES, 180 * K, 24 * K, 204 * K,
	   180 * K, 204 * K, 0);

  /* Allocation: mode 0 as posix_fallocate, KEEP_SIZE within the file.  */
  fd = layout ("alloc", path, sizeof path);
  t_ok (fa (fd, 0, HI_OFF, SMALL_LEN) == 0
	&& t_size (fd) == HI_OFF + SMALL_LEN
	&& t_alloc (fd) >= 128 * K + SMALL_LEN && kept (fd, 0, HI_OFF),
	"mode 0 beyond 4 GiB: allocated, size %lld, data kept",
	(long long) (HI_OFF + SMALL_LEN));
  t_ok (fa (fd, FALLOC_FL_KEEP_SIZE, 32 * K, 96 * K) == 0
	&& t_size (fd) == HI_OFF + SMALL_LEN
	&& t_alloc (fd) >= 192 * K + SMALL_LEN && kept (fd, 0, HI_OFF),
	"KEEP_SIZE over a hole: allocated, size and data kept");
  t_ok (fa (fd, FALLOC_FL_KEEP_SIZE, HI_OFF + HI_LEN, SMALL_LEN) == 0
	&& t_size (fd) == HI_OFF + SMALL_LEN,
	"KEEP_SIZE past the end: succeeds, size kept");
  close (fd);
  unlink (path);

  /* What cannot be emulated keeps the refusal, and changes nothing.  */
  static const struct { int mode; const char *name; } no[] = {
    { FALLOC_FL_COLLAPSE_RANGE, "COLLAPSE_RANGE" },
    { FALLOC_FL_INSERT_RANGE, "INSERT_RANGE" },
    { FALLOC_FL_UNSHARE_RANGE, "UNSHARE_RANGE" },
    { FALLOC_FL_PUNCH_HOLE, "PUNCH_HOLE without KEEP_SIZE" },
    { FALLOC_FL_WRITE_ZEROES | FALLOC_FL_KEEP_SIZE, "WRITE_ZEROES|KEEP_SIZE" },
    { FALLOC_FL_NO_HIDE_STALE, "NO_HIDE_STALE" },
    { 0x100, "unknown bit 0x100" },
  };
  fd = layout ("refused", path, sizeof path);
  for (size_t i = 0; filt && i < sizeof no / sizeof no[0]; i++)
    {
      int r = fa (fd, no[i].mode, 64 * K, 64 * K);
      t_ok (r == filt && t_size (fd) == SIZE && kept (fd, 0, SIZE),
	    "%s: refused as the kernel did (%s), nothing changed (got %s)",
	    no[i].name, strerror (filt), strerror (r));
    }
  /* Bad input gets the kernel's answer from the emulation too.  */
  int ro = open (path, O_RDONLY);
  t_ok (fa (ro, FALLOC_FL_ZERO_RANGE, 0, 4096) == EBADF && kept (fd, 0, SIZE),
	"ZERO_RANGE on a read-only descriptor: EBADF, nothing changed");
  t_ok (fa (fd, FALLOC_FL_ZERO_RANGE, 0, 0) == EINVAL,
	"ZERO_RANGE of len 0: EINVAL");
  t_ok (fa (fd, FALLOC_FL_COLLAPSE_RANGE, -1, 4096) == EINVAL,
	"COLLAPSE_RANGE at offset -1: EINVAL");
  t_ok (fa (fd, FALLOC_FL_ZERO_RANGE, INT64_MAX - 10, HI_LEN) == EFBIG
	&& kept (fd, 0, SIZE), "ZERO_RANGE past INT64_MAX: EFBIG");
  t_ok (fa (-1, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 0, 4096) == EBADF,
	"ZERO_RANGE on fd -1: EBADF");
  t_ok (fa (-1, FALLOC_FL_ZERO_RANGE, 0, 0) == EBADF,
	"ZERO_RANGE on fd -1, len 0: EBADF first, as the kernel");
  /* Past the filesystem's largest file (which lseek refuses too): EFBIG
     before anything is written.  */
  int big = lseek64 (fd, 1LL << 60, SEEK_SET) < 0 && errno == EINVAL;
  int r = fa (fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 1LL << 60);
  t_ok (big ? r == EFBIG && kept (fd, 0, SIZE) : r == 0 && t_zero (fd, 0, SIZE),
	"PUNCH_HOLE|KEEP_SIZE of 2^60 bytes: %s (got %s)",
	big ? "EFBIG, nothing changed" : "all zeros", strerror (r));
  close (ro);
  close (fd);
  unlink (path);
  locked_append ();
}

/* noop and an injected errno: nothing happens, whatever is asked.  */
static void
inert (int noop, int want)
{
  char path[4096];
  int fd = layout ("inert", path, sizeof path);
  int64_t alloc0 = t_alloc (fd);

  t_ok (fa (fd, 0, HI_OFF, HI_LEN) == want, "fallocate: %s",
	strerror (want));
  t_ok (fa (fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, SIZE) == want,
	"fallocate PUNCH_HOLE: %s", strerror (want));
  t_ok (fa (-1, 0, 0, 4096) == want, "fallocate on fd -1: %s",
	strerror (want));
  errno = MARK;
  t_ok (posix_fallocate64 (fd, HI_OFF, HI_LEN) == want && errno == MARK,
	"posix_fallocate: %s, errno kept", strerror (want));
  t_ok (t_size (fd) == SIZE && t_alloc (fd) == alloc0 && kept (fd, 0, SIZE),
	"%s: file untouched", noop ? "noop" : "injected errno");
  close (fd);
  unlink (path);
}

/* Each call appends exactly one line, "libfallocate[PID]: CALL", to the
   file named when the program started, even after the program has changed
   directory and overwritten its environment (programs that set their
   process title do).  */
static void
traced (char *env)
{
  char file[4096], cwd[4096], path[4096], want[3][512];
  char got[3][512] = { "", "", "" };
  int fd = layout ("traced", path, sizeof path);
  FILE *f;
  long lines = 0;

  if (*env == '/')
    snprintf (file, sizeof file, "%s", env);
  else
    snprintf (file, sizeof file, "%s/%s", getcwd (cwd, sizeof cwd), env);
  unlink (file);
  memset (env, 'y', strlen (env));
  if (chdir ("/") < 0)
    t_ok (0, "chdir /: %s", strerror (errno));
  int r1 = fa (fd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_ZERO_RANGE, HI_OFF,
	       SMALL_LEN);
  int r2 = posix_fallocate64 (fd, 64 * K, 64 * K);
  int r3 = fa (fd, -1, 0, 4096);
  if ((f = fopen (file, "r")) == NULL)
    {
      t_ok (0, "trace file %s: %s", file, strerror (errno));
      return;
    }
  for (char line[512]; fgets (line, sizeof line, f); lines++)
    if (lines < 3)
      snprintf (got[lines], sizeof got[lines], "%s", line);
  fclose (f);
  snprintf (want[0], sizeof want[0],
	    "libfallocate[%ld]: fallocate(%d, KEEP_SIZE|ZERO_RANGE, %lld, "
	    "%lld) = %s", (long) getpid (), fd, (long long) HI_OFF,
	    (long long) SMALL_LEN, r1 ? "-1 " : "0");
  snprintf (want[1], sizeof want[1],
	    "libfallocate[%ld]: posix_fallocate(%d, %lld, %lld) = 0",
	    (long) getpid (), fd, 64LL * K, 64LL * K);
  snprintf (want[2], sizeof want[2],
	    "libfallocate[%ld]: fallocate(%d, KEEP_SIZE|PUNCH_HOLE|"
	    "NO_HIDE_STALE|COLLAPSE_RANGE|ZERO_RANGE|INSERT_RANGE|"
	    "UNSHARE_RANGE|WRITE_ZEROES|0xffffff00, 0, 4096) = -1 %s",
	    (long) getpid (), fd, r3 == EOPNOTSUPP ? "EOPNOTSUPP" : "ENOSYS");
  t_ok (lines == 3, "trace: one line per call (got %ld)", lines);
  for (int i = 0; i < 3; i++)
    t_ok (strncmp (got[i], want[i], strlen (want[i])) == 0,
	  "trace: the call as made, \"%s\" (got \"%s\")", want[i], got[i]);
  t_ok (r2 == 0 && (r3 == EOPNOTSUPP || r3 == filt),
	"traced calls return what they would untraced");
  close (fd);
  unlink (path);
}

/* FALLOCATE_SHIM_TRACE=-: lines go to standard error (a file here, read
   back), and nowhere once descriptor 2 is another file.  */
static void
traced_stderr (void)
{
  char path[4096], fpath[4096], buf[4096] = "", want[256];
  int fd = layout ("traced", path, sizeof path), err, n = 0;

  int r = fa (fd, FALLOC_FL_KEEP_SIZE, 0, 4096);
  if ((err = open ("/proc/self/fd/2", O_RDONLY)) < 0
      || (n = (int) pread (err, buf, sizeof buf - 1, 0)) < 0)
    t_unsupported ("trace to standard error: reading it back: %s",
		   strerror (errno));
  else
    {
      buf[n] = '\0';
      snprintf (want, sizeof want,
		"libfallocate[%ld]: fallocate(%d, KEEP_SIZE, 0, 4096) = %s",
		(long) getpid (), fd, r ? "-1 " : "0");
      t_ok (strstr (buf, want) != NULL, "trace to standard error: \"%s\"",
	    want);
    }
  if (err >= 0)
    close (err);
  close (2);
  int f2 = t_create (dir, "not-stderr", fpath, sizeof fpath);
  fa (fd, FALLOC_FL_KEEP_SIZE, 0, 4096);
  t_ok (f2 == 2 && t_size (f2) == 0,
	"trace to standard error: nothing into the file that took its "
	"descriptor");
  close (f2);
  unlink (fpath);
  close (fd);
  unlink (path);
}

int
main (int argc, char **argv)
{
  const char *policy = getenv ("FALLOCATE_SHIM_POLICY");
  char *trace = getenv ("FALLOCATE_SHIM_TRACE");

  if (argc != 2 && argc != 3)
    {
      fprintf (stderr, "usage: t-policy DIR [ENOSYS|EOPNOTSUPP]\n");
      return 2;
    }
  dir = argv[1];
  /* Said by the caller: under the emulate policy a probe by fallocate
     would be emulated too.  */
  if (argc > 2)
    filt = strcmp (argv[2], "ENOSYS") == 0 ? ENOSYS : EOPNOTSUPP;
  if (trace != NULL && strcmp (trace, "-") == 0)
    traced_stderr ();
  else if (trace != NULL && *trace != '\0')
    traced (trace);
  else if (policy == NULL || strcmp (policy, "emulate") == 0)
    emulate ();
  else if (strcmp (policy, "noop") == 0)
    inert (1, 0);
  else if (strcmp (policy, "off") == 0)
    off ();
  else
    inert (0, strcmp (policy, "ENOSPC") == 0 ? ENOSPC
	   : strcmp (policy, "EIO") == 0 ? EIO : atoi (policy));
  return t_done ();
}
