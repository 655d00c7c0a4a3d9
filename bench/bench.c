/* bench [-c CASES] [-p SHIM] [DIR...]: libfallocate against the system
   glibc, side by side in one run.  Ours is linked in from libfallocate.a;
   glibc's functions come from dlopen ("libc.so.6").  Each case runs both,
   in alternating order (A B, B A, ...), several times, and the table gives
   the medians and the ratio ours/reference (the median of the ratios of
   pairs run back to back).  A benchmark, not a test: it
   says which targets were missed and exits 0 all the same.

   The fallback cases run on each DIR (default: a fresh temporary
   directory) in a forked child.  Where the filesystem has fallocate, that
   child installs a seccomp filter that makes the system call fail with
   EOPNOTSUPP, so both libraries take their fallback; where it has not
   (ext2), the fallback is the real path and no filter is used.  SHIM is
   the libfallocate.so preloaded in the start-up case.  CASES lists the
   numbers of the cases to run (default: all, 12345678).

   Case 8 runs this program again, as "bench --sv-child ...", under
   fallocate-shim --supervise's supervisor (FA_SUPERVISOR) and without
   it, and compares what one call costs there; with an ext2 DIR, also
   during four fills there.  */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "fa-deny.h"

#define MiB (1 << 20)
#define BIG (256 * MiB)		/* cases 2, 3, 4 */
#define DSYNC (4 * MiB)	/* case 5: each glibc write waits for the disk */
#define PIECE (64 * 1024)	/* sparse files: data, hole, data, ... */
#define REPS 9			/* of each fallback case, per library */
#define CALLS 2000		/* fallocate calls in one timing of case 1 */
#define CALL_REPS 301
#define STARTS 1000		/* process starts, per variant */
#define TINY 65536		/* case 7: one-byte calls in one timing */
#define TINY_REPS 5
#define TRIVIAL "/bin/true"

#ifndef FA_SHIM
# define FA_SHIM ".libs/libfallocate.so.0"
#endif
#ifndef FA_SUPERVISOR
# define FA_SUPERVISOR "supervise/fallocate-supervise"
#endif
#define SV_REPS 11		/* case 8: processes per variant */
#define SV_BLOCKS 101		/* timings in each */
#define SV_CALLS 200		/* calls in each timing */

typedef int (*fallocate_fn) (int, int, off64_t, off64_t);
typedef int (*posix_fn) (int, off64_t, off64_t);

static struct
{
  const char *name;
  fallocate_fn fa;
  posix_fn pf;
} lib[2];

static const char *cases = "12345678";	/* -c: the cases to run */
static char pattern[MiB];
static char zeros[MiB];		/* .bss: no megabyte in the program file */
static int missed;

static void
die (const char *fmt, ...)
{
  va_list ap;

  fflush (stdout);
  va_start (ap, fmt);
  fputs ("bench: ", stderr);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  va_end (ap);
  exit (1);
}

static double
now (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int
cmp (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (const double *v, int n)
{
  double s[n];

  memcpy (s, v, sizeof s);
  qsort (s, n, sizeof *s, cmp);
  return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static const char *
human (double s, char *buf)
{
  if (s < 1e-6)
    sprintf (buf, "%.1f ns", s * 1e9);
  else if (s < 1e-3)
    sprintf (buf, "%.2f us", s * 1e6);
  else if (s < 1)
    sprintf (buf, "%.2f ms", s * 1e3);
  else
    sprintf (buf, "%.3f s", s);
  return buf;
}

/* One line of the table from N timings of ours (A) and of the reference
   (B), pair I run back to back: the medians, and the median of the N
   ratios A[I] / B[I], which leaves out what drifted between pairs.
   TARGET is "", or "<= X" or "< X" on that ratio.  */
static void
row (const char *what, const char *fs, const double *a, const double *b,
     int n, const char *target)
{
  char x[32], y[32];
  const char *verdict = "";
  double q[n], r;

  for (int i = 0; i < n; i++)
    q[i] = a[i] / b[i];
  r = median (q, n);
  if (*target)
    {
      int le = target[1] == '=';
      double limit = strtod (target + 1 + le, NULL);
      int ok = le ? r <= limit : r < limit;
      verdict = ok ? "ok" : "MISS";
      missed += !ok;
    }
  printf ("| %-44s | %-6s | %10s | %10s | %7.3f | %8.2fx | %-10s %-4s |\n",
	  what, fs, human (median (a, n), x), human (median (b, n), y), r,
	  1 / r, target, verdict);
  fflush (stdout);
}

static int
create (const char *dir, const char *name, int flags)
{
  char path[4096];
  int fd;

  snprintf (path, sizeof path, "%s/%s", dir, name);
  fd = open (path, O_RDWR | O_CREAT | O_TRUNC | flags, 0644);
  if (fd < 0)
    die ("%s: %s", path, strerror (errno));
  return fd;
}

/* Before each timing: what earlier steps left to write back goes to the
   disk now, not in the middle of the next measurement.  */
static void
settle (int fd)
{
  if (syncfs (fd) < 0)
    die ("syncfs: %s", strerror (errno));
}

static void
drop (const char *dir, const char *name, int fd)
{
  char path[4096];

  snprintf (path, sizeof path, "%s/%s", dir, name);
  close (fd);
  unlink (path);
}

static void
put (int fd, const char *buf, off64_t off, off64_t len)
{
  while (len > 0)
    {
      size_t n = len < MiB ? (size_t) len : MiB;
      ssize_t w = pwrite64 (fd, buf, n, off);
      if (w <= 0)
	die ("pwrite: %s", w < 0 ? strerror (errno) : "short");
      off += w;
      len -= w;
    }
}

/* Data in every other PIECE of [0, size), holes between.  */
static void
make_sparse (int fd, off64_t size)
{
  for (off64_t at = 0; at < size; at += 2 * PIECE)
    put (fd, pattern, at, PIECE);
  if (ftruncate64 (fd, size) < 0)
    die ("ftruncate: %s", strerror (errno));
}

/* The call must have succeeded and left SIZE bytes, all allocated.  */
static void
check (int err, int fd, off64_t size, const char *who)
{
  struct stat64 st;

  if (err)
    die ("%s: posix_fallocate: %s", who, strerror (err));
  if (fstat64 (fd, &st) < 0 || st.st_size != size
      || st.st_blocks * 512 < size)
    die ("%s: posix_fallocate left size %lld, %lld bytes allocated", who,
	 (long long) st.st_size, (long long) st.st_blocks * 512);
}

/* Case 1: the cost of one fallocate (KEEP_SIZE) call that the kernel
   answers at once (the page is already allocated).  */
static void
case_syscall (const char *dir, const char *fs)
{
  const off64_t off = 0x100003000LL, len = 4096;
  double t[2][CALL_REPS];
  int fd = create (dir, "fa-bench-call", 0);

  if (lib[0].fa (fd, FALLOC_FL_KEEP_SIZE, off, len) != 0)
    die ("fallocate on %s: %s", dir, strerror (errno));
  for (int r = 0; r < CALL_REPS; r++)
    for (int k = 0; k < 2; k++)
      {
	int v = (r + k) % 2;
	fallocate_fn fa = lib[v].fa;
	double t0 = now ();
	for (int n = 0; n < CALLS; n++)
	  if (fa (fd, FALLOC_FL_KEEP_SIZE, off, len) != 0)
	    die ("%s fallocate: %s", lib[v].name, strerror (errno));
	t[v][r] = (now () - t0) / CALLS;
      }
  drop (dir, "fa-bench-call", fd);
  row ("1 fallocate KEEP_SIZE 4 KiB, one call", fs, t[0], t[1], CALL_REPS,
       "<= 1.02");
}

/* Case 2: posix_fallocate of BIG bytes on an empty file, against the
   plain writing of as many zeros, 1 MiB at a time (variant 2).  */
static void
case_new (const char *dir, const char *fs)
{
  double t[3][REPS];

  for (int r = 0; r < REPS; r++)
    for (int k = 0; k < 3; k++)
      {
	int v = (r + k) % 3, err = 0;
	int fd = create (dir, "fa-bench-new", 0);
	settle (fd);
	double t0 = now ();
	if (v < 2)
	  err = lib[v].pf (fd, 0, BIG);
	else
	  put (fd, zeros, 0, BIG);
	t[v][r] = now () - t0;
	check (err, fd, BIG, v < 2 ? lib[v].name : "limit");
	drop (dir, "fa-bench-new", fd);
      }
  row ("2 new space 256 MiB", fs, t[0], t[1], REPS, "");
  row ("2b  same, against 1 MiB zero pwrites", fs, t[0], t[2], REPS,
       "<= 1.2");
}

/* Case 3: a file that already holds BIG bytes of data.  */
static void
case_data (const char *dir, const char *fs)
{
  double t[2][REPS];
  int fd = create (dir, "fa-bench-data", 0);

  put (fd, pattern, 0, BIG);
  settle (fd);
  for (int r = 0; r < REPS; r++)
    for (int k = 0; k < 2; k++)
      {
	int v = (r + k) % 2;
	double t0 = now ();
	int err = lib[v].pf (fd, 0, BIG);
	t[v][r] = now () - t0;
	check (err, fd, BIG, lib[v].name);
      }
  drop (dir, "fa-bench-data", fd);
  row ("3 over 256 MiB of data", fs, t[0], t[1], REPS, "<= 0.1");
}

/* Cases 4 and 5: a sparse file of SIZE bytes, half holes, filled through
   a descriptor opened with FLAGS.  */
static void
case_sparse (const char *dir, const char *fs, off64_t size, int flags,
	     const char *what)
{
  double t[2][REPS];
  char path[4096];

  snprintf (path, sizeof path, "%s/fa-bench-sparse", dir);
  for (int r = 0; r < REPS; r++)
    for (int k = 0; k < 2; k++)
      {
	int v = (r + k) % 2;
	int fd = create (dir, "fa-bench-sparse", 0), cfd = fd;
	make_sparse (fd, size);
	settle (fd);
	if (flags && (cfd = open (path, O_RDWR | flags)) < 0)
	  die ("%s: %s", path, strerror (errno));
	double t0 = now ();
	int err = lib[v].pf (cfd, 0, size);
	t[v][r] = now () - t0;
	check (err, fd, size, lib[v].name);
	if (cfd != fd)
	  close (cfd);
	drop (dir, "fa-bench-sparse", fd);
      }
  row (what, fs, t[0], t[1], REPS, "< 1");
}

/* Case 7: xfstests generic/438's pattern, TINY one-byte calls at the end
   of a file, posix_fallocate (fd, i, 1) for i = 0, 1, 2, ...: what a
   call costs before any byte is written, as programs that extend a
   file in small steps pay it.  (generic/438 makes 262,144; fewer keep
   the case short, and the per-call cost does not grow with the file.)  */
static void
case_tiny (const char *dir, const char *fs)
{
  double t[2][TINY_REPS];
  char what[64];

  for (int r = 0; r < TINY_REPS; r++)
    for (int k = 0; k < 2; k++)
      {
	int v = (r + k) % 2;
	int fd = create (dir, "fa-bench-tiny", 0);
	settle (fd);
	double t0 = now ();
	for (off64_t i = 0; i < TINY; i++)
	  {
	    int err = lib[v].pf (fd, i, 1);
	    if (err)
	      die ("%s: posix_fallocate at %lld: %s", lib[v].name,
		   (long long) i, strerror (err));
	  }
	t[v][r] = now () - t0;
	check (0, fd, TINY, lib[v].name);
	drop (dir, "fa-bench-tiny", fd);
      }
  snprintf (what, sizeof what, "7 %d calls of 1 byte at the end of file",
	    TINY);
  row (what, fs, t[0], t[1], TINY_REPS, "<= 1.0");
}

/* The fallback cases on DIR, in a child that makes fallocate fail unless
   the filesystem already does.  */
static void
fallback_cases (const char *dir, const char *fs, int real)
{
  pid_t pid = fork ();
  int status;

  if (pid < 0)
    die ("fork: %s", strerror (errno));
  if (pid == 0)
    {
      /* The parent's count came along with the fork: the exit status
	 reports this child's alone.  */
      missed = 0;
      if (!real && fa_deny_fallocate (EOPNOTSUPP) < 0)
	die ("seccomp: %s", strerror (errno));
      if (strchr (cases, '2'))
	case_new (dir, fs);
      if (strchr (cases, '3'))
	case_data (dir, fs);
      if (strchr (cases, '4'))
	case_sparse (dir, fs, BIG, 0, "4 sparse 256 MiB, half holes of 64 KiB");
      if (strchr (cases, '5'))
	case_sparse (dir, fs, DSYNC, O_DSYNC,
		     "5 same, 4 MiB, O_DSYNC descriptor");
      if (strchr (cases, '7'))
	case_tiny (dir, fs);
      /* 100 + the targets it missed; die's 1 is a failure.  */
      fflush (stdout);
      _exit (100 + missed);
    }
  if (waitpid (pid, &status, 0) < 0 || !WIFEXITED (status)
      || WEXITSTATUS (status) < 100)
    die ("the fallback cases on %s failed", dir);
  missed += WEXITSTATUS (status) - 100;
}

/* Time one start of TRIVIAL with the environment ENV.  */
static double
start (char **env)
{
  char *argv[] = { TRIVIAL, NULL };
  double t0 = now ();
  pid_t pid = vfork ();
  int status;

  if (pid == 0)
    {
      execve (TRIVIAL, argv, env);
      _exit (127);
    }
  if (pid < 0 || waitpid (pid, &status, 0) < 0 || status != 0)
    die ("%s did not run", TRIVIAL);
  return now () - t0;
}

/* The loader says on stderr when it cannot preload LIB: then it would be
   timing nothing.  */
static void
preloadable (const char *lib, char **env)
{
  char err[256];
  int p[2];

  if (access (lib, R_OK) < 0 || pipe (p) < 0)
    die ("%s: %s", lib, strerror (errno));
  pid_t pid = fork ();
  if (pid == 0)
    {
      dup2 (p[1], 2);
      execve (TRIVIAL, (char *[]) { TRIVIAL, NULL }, env);
      _exit (127);
    }
  close (p[1]);
  ssize_t got = read (p[0], err, sizeof err - 1);
  close (p[0]);
  waitpid (pid, NULL, 0);
  if (got > 0)
    die ("preloading %s: %.*s", lib, (int) got, err);
}

/* Case 6: process start with libfallocate preloaded, without, and with
   glibc's libdl.so.2 preloaded instead: an empty stub since glibc 2.34,
   so what LD_PRELOAD costs by itself.  */
static void
case_preload (const char *shim)
{
  extern char **environ;
  static double t[3][STARTS];
  char *env[3][256], pre[2][4200];
  struct link_map *stub;
  void *h = dlopen ("libdl.so.2", RTLD_NOW);
  int n = 0, nv = 2;

  for (char **e = environ; *e && n < 254; e++)
    if (strncmp (*e, "LD_PRELOAD=", 11) != 0)
      env[0][n] = env[1][n] = env[2][n] = *e, n++;
  snprintf (pre[0], sizeof pre[0], "LD_PRELOAD=%s", shim);
  env[0][n] = pre[0];
  env[0][n + 1] = env[1][n] = NULL;
  preloadable (shim, env[0]);
  if (h && dlinfo (h, RTLD_DI_LINKMAP, &stub) == 0 && *stub->l_name)
    {
      snprintf (pre[1], sizeof pre[1], "LD_PRELOAD=%s", stub->l_name);
      env[2][n] = pre[1];
      env[2][n + 1] = NULL;
      preloadable (stub->l_name, env[2]);
      nv = 3;
    }

  for (int r = 0; r < STARTS; r++)
    for (int k = 0; k < nv; k++)
      {
	int v = (r + k) % nv;
	t[v][r] = start (env[v]);
      }
  row ("6 start of " TRIVIAL ", LD_PRELOAD / none", "-", t[0], t[1], STARTS,
       "< 1.05");
  if (nv == 3)
    row ("6b  same, against preloading libdl.so.2", "-", t[0], t[2], STARTS,
	 "");
}

/* Case 8, in the process measured: SV_BLOCKS timings of SV_CALLS calls
   of WHAT, and the median time of one call on standard output.  WHAT:
   "keep", fallocate KEEP_SIZE of 4 KiB already allocated, on a file in
   DIR (the filter lets it through unless a policy is set); "mode0", mode
   0 over the same 4 KiB (sent to the supervisor, which makes the call);
   "getppid", a system call the filter lets through; "fill", 4 KiB past
   the end of a file on ext2 (DIR), SV_CALLS / 10 per timing, by the
   system call supervised and by posix_fallocate64 (the library in this
   process) not.  "fills": four
   processes each fill 64 MiB of a new file in DIR2 (ext2: the
   supervisor's fallback writes) while this one makes "mode0" calls one
   at a time; their median and worst time, and the fills' time, out.  */
static int
sv_child (const char *what, const char *dir, const char *dir2)
{
  const off64_t off = 0x100003000LL, len = 4096;
  int fa = strcmp (what, "getppid") != 0;
  int mode = strcmp (what, "keep") == 0 ? FALLOC_FL_KEEP_SIZE : 0;
  int fd = fa ? create (dir, "fa-bench-sv", 0) : -1;
  static double t[SV_BLOCKS * SV_CALLS];

  if (strcmp (what, "fill") == 0)
    {
      /* A new 4 KiB past the end each call: the supervisor's answer
	 (the system call, then the fallback) against the library's. */
      int sv = getenv ("FALLOCATE_SHIM_SUPERVISED") != NULL;
      int64_t at = 0;

      for (int b = 0; b < SV_BLOCKS; b++)
	{
	  double t0 = now ();
	  for (int n = 0; n < SV_CALLS / 10; n++, at += len)
	    if (sv ? syscall (SYS_fallocate, fd, 0, at, len) != 0
		: posix_fallocate64 (fd, at, len) != 0)
	      die ("fill: %s", strerror (errno));
	  t[b] = (now () - t0) / (SV_CALLS / 10);
	}
      drop (dir, "fa-bench-sv", fd);
      printf ("%.12e\n", median (t, SV_BLOCKS));
      return 0;
    }
  if (fa && syscall (SYS_fallocate, fd, mode, off, len) != 0)
    die ("fallocate on %s: %s", dir, strerror (errno));
  if (strcmp (what, "fills") == 0)
    {
      pid_t pid[4];
      int p[2];
      char c, name[32];

      if (pipe (p) < 0)
	die ("pipe: %s", strerror (errno));
      for (int i = 0; i < 4; i++)
	if ((pid[i] = fork ()) == 0)
	  {
	    snprintf (name, sizeof name, "fa-bench-fill%d", i);
	    int f = create (dir2, name, 0);
	    write (p[1], "r", 1);
	    _exit (syscall (SYS_fallocate, f, 0, (off64_t) 0,
			    (off64_t) 64 * MiB) == 0 ? 0 : 1);
	  }
      for (int i = 0; i < 4; i++)
	read (p[0], &c, 1);
      double t0 = now (), worst = 0;
      int n = 0, status, bad = 0;
      /* Calls until every fill has ended, timed one by one.  */
      for (int left = 4; left > 0 && n < SV_BLOCKS * SV_CALLS;)
	{
	  double c0 = now ();
	  if (syscall (SYS_fallocate, fd, 0, off, len) != 0)
	    die ("mode0: %s", strerror (errno));
	  t[n] = now () - c0;
	  worst = t[n] > worst ? t[n] : worst;
	  n++;
	  for (int i = 0; i < 4; i++)
	    if (pid[i] > 0 && waitpid (pid[i], &status, WNOHANG) == pid[i])
	      {
		bad |= status != 0;
		pid[i] = 0;
		left--;
	      }
	}
      double fills = now () - t0;
      for (int i = 0; i < 4; i++)
	{
	  if (pid[i] > 0)
	    waitpid (pid[i], &status, 0);
	  snprintf (name, sizeof name, "fa-bench-fill%d", i);
	  drop (dir2, name, -1);
	}
      if (bad)
	die ("fills: a fill failed");
      drop (dir, "fa-bench-sv", fd);
      printf ("%.12e %.12e %.12e\n", median (t, n), worst, fills);
      return 0;
    }
  for (int b = 0; b < SV_BLOCKS; b++)
    {
      double t0 = now ();
      for (int n = 0; n < SV_CALLS; n++)
	if (fa ? syscall (SYS_fallocate, fd, mode, off, len)
	     != 0 : syscall (SYS_getppid) < 0)
	  die ("%s: %s", what, strerror (errno));
      t[b] = (now () - t0) / SV_CALLS;
    }
  if (fa)
    drop (dir, "fa-bench-sv", fd);
  printf ("%.12e\n", median (t, SV_BLOCKS));
  return 0;
}

/* One process of case 8: bench --sv-child WHAT DIR DIR2, under the
   supervisor (with POLICY, if not NULL) or not; what it measured, up to
   three figures, into V.  */
static void
sv_run (const char *self, const char *what, const char *dir,
	const char *dir2, int supervised, const char *policy, double *v)
{
  char buf[256];
  int p[2], status;
  pid_t pid;

  if (pipe (p) < 0 || (pid = fork ()) < 0)
    die ("case 8: %s", strerror (errno));
  if (pid == 0)
    {
      char *child[] = { (char *) self, (char *) "--sv-child", (char *) what,
			(char *) dir, (char *) dir2, NULL };
      char *sv[] = { (char *) FA_SUPERVISOR, (char *) "--", (char *) self,
		     (char *) "--sv-child", (char *) what, (char *) dir,
		     (char *) dir2, NULL };

      dup2 (p[1], 1);
      close (p[0]);
      close (p[1]);
      unsetenv ("FALLOCATE_SHIM_POLICY");
      unsetenv ("FALLOCATE_SHIM_TRACE");
      if (policy)
	setenv ("FALLOCATE_SHIM_POLICY", policy, 1);
      if (supervised)
	execv (FA_SUPERVISOR, sv);
      else
	execv (self, child);
      _exit (127);
    }
  close (p[1]);
  ssize_t n = read (p[0], buf, sizeof buf - 1);
  close (p[0]);
  if (waitpid (pid, &status, 0) < 0 || status != 0 || n <= 0)
    die ("case 8: %s%s did not run", what, supervised ? " supervised" : "");
  buf[n] = 0;
  v[0] = v[1] = v[2] = 0;
  sscanf (buf, "%lf %lf %lf", &v[0], &v[1], &v[2]);
}

/* Case 8: fallocate calls the kernel answers at once, supervised
   (fallocate-shim --supervise) and not: KEEP_SIZE, which the filter lets
   through; mode 0, which goes to the supervisor (target 10 us), and the
   same under --noop, where the supervisor answers without a call (the
   round trip alone); a system call the filter lets through (getppid),
   under the filter and not.  With an ext2 directory (EXT2, or NULL),
   a 4 KiB fill there, supervised (in a process of the supervisor's
   own) against the library's in this process (8g), and mode 0 calls
   during four fills there: none may wait for a fill (target: the worst
   under a tenth of the fills' time).  */
static void
case_supervised (const char *dir, const char *fs, const char *ext2)
{
  static double t[4][2][SV_REPS];
  double v[3];
  char self[4096], x[32], y[32];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  const char *what[4] = { "keep", "mode0", "mode0", "getppid" };

  if (access (FA_SUPERVISOR, X_OK) < 0)
    {
      printf ("| %-44s | %-6s | %s: %s\n", "8 supervised call", fs,
	      FA_SUPERVISOR, strerror (errno));
      return;
    }
  if (n <= 0)
    die ("/proc/self/exe: %s", strerror (errno));
  self[n] = 0;
  for (int w = 0; w < 4; w++)
    for (int r = 0; r < SV_REPS; r++)
      for (int k = 0; k < 2; k++)
	{
	  int u = (r + k) % 2;
	  /* 8d: supervised, noop, against supervised, the call made.  */
	  sv_run (self, what[w], dir, "-", w == 2 || u == 0,
		  w == 2 && u == 0 ? "noop" : NULL, v);
	  t[w][u][r] = v[0];
	}
  row ("8 KEEP_SIZE 4 KiB (let through), sv/not", fs, t[0][0],
       t[0][1], SV_REPS, "");
  row ("8c mode 0 over 4 KiB, supervised/not", fs, t[1][0], t[1][1],
       SV_REPS, "");
  double m = median (t[1][0], SV_REPS);
  int ok = m < 10e-6;
  missed += !ok;
  printf ("| %-44s | %-6s | %10s | %10s | %7s | %9s | %-10s %-4s |\n",
	  "8a  8c supervised, against 10 us", fs, human (m, x),
	  "", "", "", "< 10 us", ok ? "ok" : "MISS");
  row ("8d  the round trip alone (--noop) / 8c", fs, t[2][0], t[2][1],
       SV_REPS, "");
  row ("8b getppid, under the filter/not", "-", t[3][0], t[3][1],
       SV_REPS, "");
  if (ext2)
    {
      static double f[2][SV_REPS];

      for (int r = 0; r < SV_REPS; r++)
	for (int k = 0; k < 2; k++)
	  {
	    sv_run (self, "fill", ext2, "-", (r + k) % 2 == 0, NULL, v);
	    f[(r + k) % 2][r] = v[0];
	  }
      row ("8g 4 KiB filled on ext2, supervised/library", "ext2", f[0],
	   f[1], SV_REPS, "");
      sv_run (self, "fills", dir, ext2, 1, NULL, v);
      ok = v[1] < v[2] / 10;
      missed += !ok;
      printf ("| %-44s | %-6s | %10s | %10s | %7.3f | %9s | %-10s %-4s |\n",
	      "8e  8c in 4 fills of 64 MiB: worst/fills", fs,
	      human (v[1], x), human (v[2], y), v[1] / v[2], "",
	      "< 0.1", ok ? "ok" : "MISS");
      printf ("| %-44s | %-6s | %10s | %10s | %7s | %9s | %-15s |\n",
	      "8f  the same, median", fs, human (v[0], x), "", "", "", "");
    }
  fflush (stdout);
}

/* The type of the filesystem holding DIR, from /proc/self/mountinfo.  */
static const char *
fstype (const char *dir, char *buf, size_t size)
{
  struct stat64 st;
  char line[4096];
  FILE *f = fopen ("/proc/self/mountinfo", "r");

  snprintf (buf, size, "?");
  if (!f || stat64 (dir, &st) < 0)
    return buf;
  while (fgets (line, sizeof line, f))
    {
      unsigned int maj, min;
      char *sep = strstr (line, " - ");
      if (sep && sscanf (line, "%*d %*d %u:%u", &maj, &min) == 2
	  && maj == major (st.st_dev) && min == minor (st.st_dev))
	sscanf (sep + 3, "%31s", buf);
    }
  fclose (f);
  return buf;
}

/* Whether the filesystem of DIR lacks fallocate, so that the fallback is
   the real path there.  */
static int
lacks_fallocate (const char *dir)
{
  int fd = create (dir, "fa-bench-probe", 0);
  long r = syscall (SYS_fallocate, fd, 0, (off64_t) 0, (off64_t) 4096);
  int e = errno;

  drop (dir, "fa-bench-probe", fd);
  return r < 0 && e == EOPNOTSUPP;
}

static void
machine (void)
{
  char line[256], model[256] = "?", libc[64] = "?";
  struct utsname u;
  FILE *f = fopen ("/proc/cpuinfo", "r");

  while (f && fgets (line, sizeof line, f))
    if (strncmp (line, "model name", 10) == 0)
      {
	snprintf (model, sizeof model, "%s", strchr (line, ':') + 2);
	model[strcspn (model, "\n")] = 0;
	break;
      }
  if (f)
    fclose (f);
  uname (&u);
  confstr (_CS_GNU_LIBC_VERSION, libc, sizeof libc);
  printf ("machine: %s, %ld cpus; kernel %s %s %s; %s; libfallocate %s\n",
	  model, sysconf (_SC_NPROCESSORS_ONLN), u.sysname, u.release,
	  u.machine, libc, PACKAGE_VERSION);
}

/* Ours and glibc's, and proof that they are not the same functions.  */
static void
resolve (void)
{
  void *libc = dlopen ("libc.so.6", RTLD_NOW);
  Dl_info a, b;

  if (!libc)
    die ("%s", dlerror ());
  lib[0].name = "libfallocate";
  lib[0].fa = fallocate64;
  lib[0].pf = posix_fallocate64;
  lib[1].name = "glibc";
  lib[1].fa = (fallocate_fn) dlsym (libc, "fallocate64");
  lib[1].pf = (posix_fn) dlsym (libc, "posix_fallocate64");
  if (!lib[1].fa || !lib[1].pf)
    die ("%s", dlerror ());
  if (!dladdr ((void *) lib[0].pf, &a) || !dladdr ((void *) lib[1].pf, &b)
      || (void *) lib[0].pf == (void *) lib[1].pf
      || (void *) lib[0].fa == (void *) lib[1].fa
      || strcmp (a.dli_fname, b.dli_fname) == 0)
    die ("libfallocate's functions are not linked in");
  printf ("ours: posix_fallocate64 at %p in %s; glibc's at %p in %s\n",
	  (void *) lib[0].pf, a.dli_fname, (void *) lib[1].pf, b.dli_fname);
}

/* A tmpfs for case 1: DIR if it is one, else /dev/shm.  */
static const char *
tmpfs_dir (const char *dir)
{
  char buf[32];

  if (strcmp (fstype (dir, buf, sizeof buf), "tmpfs") == 0)
    return dir;
  return "/dev/shm";
}

int
main (int argc, char **argv)
{
  const char *shim = FA_SHIM;
  char tmp[4096] = "", fs[32], *deflt[] = { tmp };
  char **dirs = deflt;
  int opt, ndirs = 1;
  double t0 = now ();

  if (argc == 5 && strcmp (argv[1], "--sv-child") == 0)
    return sv_child (argv[2], argv[3], argv[4]);
  while ((opt = getopt (argc, argv, "c:p:")) != -1)
    if (opt == 'c')
      cases = optarg;
    else if (opt == 'p')
      shim = optarg;
    else
      {
	fprintf (stderr, "usage: bench [-c CASES] [-p SHIM] [DIR...]\n");
	return 2;
      }
  if (optind < argc)
    {
      dirs = argv + optind;
      ndirs = argc - optind;
    }
  else
    {
      snprintf (tmp, sizeof tmp, "%s/fa-bench.XXXXXX",
		getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
      if (!mkdtemp (tmp))
	die ("mkdtemp: %s", strerror (errno));
    }
  memset (pattern, 0x5a, sizeof pattern);

  machine ();
  resolve ();
  printf ("sizes: cases 2-4 %d MiB, case 5 %d MiB, sparse pieces %d KiB; "
	  "repetitions: case 1 %d x %d calls, cases 2-5 %d, case 6 %d starts, "
	  "case 7 %d x %d calls, case 8 %d processes x %d x %d calls; "
	  "medians\n", BIG / MiB, DSYNC / MiB, PIECE / 1024, CALL_REPS, CALLS,
	  REPS, STARTS, TINY_REPS, TINY, SV_REPS, SV_BLOCKS, SV_CALLS);
  int real[ndirs];
  for (int i = 0; i < ndirs; i++)
    {
      real[i] = lacks_fallocate (dirs[i]);
      printf ("dir %s: %s, fallback %s\n", dirs[i],
	      fstype (dirs[i], fs, sizeof fs), real[i] ? "real (no fallocate)"
	      : "forced (seccomp: fallocate fails with EOPNOTSUPP)");
    }
  printf ("\n| %-44s | %-6s | %10s | %10s | %7s | %9s | %-15s |\n", "case",
	  "fs", "ours", "reference", "ratio", "speed-up", "target (ratio)");
  printf ("|%.46s|%.8s|%.12s|%.12s|%.9s|%.11s|%.17s|\n",
	  "----------------------------------------------", "--------",
	  "------------", "------------", "---------", "-----------",
	  "-----------------");
  fflush (stdout);

  const char *sd = tmpfs_dir (dirs[0]);
  if (strchr (cases, '1'))
    case_syscall (sd, fstype (sd, fs, sizeof fs));
  if (strpbrk (cases, "23457"))
    for (int i = 0; i < ndirs; i++)
      fallback_cases (dirs[i], fstype (dirs[i], fs, sizeof fs), real[i]);
  if (strchr (cases, '6'))
    case_preload (shim);
  const char *ext2 = NULL;
  for (int i = 0; i < ndirs; i++)
    if (strcmp (fstype (dirs[i], fs, sizeof fs), "ext2") == 0)
      ext2 = dirs[i];
  if (strchr (cases, '8'))
    case_supervised (sd, fstype (sd, fs, sizeof fs), ext2);
  printf ("\nreference: glibc, except 2b (zeros written by 1 MiB pwrites), "
	  "6 (no LD_PRELOAD), 6b (the empty\nlibdl.so.2 preloaded instead), 8 "
	  "(not supervised) and 8d (8c supervised). "
	  "Times are medians; ratio = median of ours / reference\nover pairs "
	  "run back to back; speed-up = 1 / ratio.\n"
	  "%d target%s missed; %.0f s\n", missed, missed == 1 ? "" : "s",
	  now () - t0);
  if (*tmp)
    rmdir (tmp);
  return 0;
}
