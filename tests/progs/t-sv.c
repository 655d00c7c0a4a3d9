/* t-sv: a program that LD_PRELOAD cannot reach, for fallocate-shim
   --supervise (tests/libfallocate.supervise).  Built against the C
   library alone, statically: glibc's libc.a by make, musl by
   supervise.exp where musl-gcc is installed; libfallocate is nowhere in
   it.  Self-contained for that reason (no tcheck).

   t-sv prep FILE                  a sparse 1 MiB file holding pattern
                                   bytes at [64 KiB, 72 KiB) and
                                   [512 KiB, 512 KiB + 100)
   t-sv check FILE alloc|none|punched LEN
                                   PASS/FAIL: [0, LEN) allocated (st_blocks,
                                   SEEK_HOLE), or not; the pattern kept
                                   (punched: its first range zeros)
   t-sv range FILE OFF LEN         PASS/FAIL: [OFF, OFF + LEN) allocated
                                   (SEEK_DATA, SEEK_HOLE), the size OFF + LEN
   t-sv posix FILE OFF LEN [wronly|append]   posix_fallocate: "result ERR"
   t-sv raw FILE MODE OFF LEN [wronly|append] syscall(SYS_fallocate):
                                   "result ERR"
   t-sv x32 FILE MODE OFF LEN      the same call by x32's number (x86_64)
   t-sv nodump FILE MODE OFF LEN   the same call, not dumpable first
   t-sv open32 FILE MODE OFF LEN   the same call, FILE opened by i386's
                                   open (int $0x80, x86_64): without
                                   O_LARGEFILE, as in an i386 program
   t-sv thread FILE MODE OFF LEN   the same call from a second thread
   t-sv lock FILE                  a write lock on [0, 100) and the offset
                                   at 12345, then posix_fallocate over
                                   1 MiB: PASS/FAIL, the lock is still ours
                                   (asked from a child) and the offset
                                   unmoved
   t-sv wait FILE READY GO         create READY, wait up to 60 s for GO,
                                   then raw mode 0 over 1 MiB: "result ERR"
   t-sv pair BIG LEN SMALL         a child process allocates [0, LEN) of
                                   BIG (a long fill), and 10 ms after it
                                   started, raw KEEP_SIZE on SMALL: PASS if
                                   that call returned before the child's
   t-sv killed FILE LEN            a child process allocating [0, LEN) of
                                   FILE (1 MiB, prepared) is killed 20 ms
                                   into its call; then raw mode 0 over
                                   1 MiB succeeds and FILE's size is the
                                   one before or LEN, nothing between
   t-sv stopped FILE               the supervisor (the parent) stopped
                                   for 3 s: PASS/FAIL, a raw KEEP_SIZE
                                   call returns within 1.5 s
   t-sv threads DIR T K            T threads make a raw mode-0 call over
                                   1 MiB (on ext2 a fill each) and K raw
                                   KEEP_SIZE calls each at once:
                                   PASS/FAIL, the supervisor
                                   (the parent) has at most T + 3 threads;
                                   then, after 64 calls one at a time,
                                   at most 4
   t-sv fds FILE N                 N calls (mode 0 and KEEP_SIZE, 4 KiB
                                   each) under the supervisor, our parent:
                                   PASS if its descriptors number the same
                                   after as before
   t-sv modes FILE                 a call in each mode of a list (valid or
                                   not), with bad arguments too: "mode M
                                   off O len L result ERR" each
   t-sv many DIR N LEN             N threads, each with a file of its own
                                   in DIR (created), make raw mode 0 over
                                   [0, LEN) at once: "results E1 ... EN"
                                   (0 or the errno, in thread order),
                                   then "nofile SOFT HARD", our own
                                   RLIMIT_NOFILE
   t-sv errnos DIR [sv]            each errno a call can get provoked
                                   (DIR on ext2: the fallback's ENOSPC):
                                   PASS/FAIL, each one arrives unchanged;
                                   sv: under the supervisor (our parent),
                                   which is stopped for one more: EINTR
   t-sv status CMD [ARGS...]       run CMD (every signal default and
                                   unblocked), print its wait status:
                                   "exit N"
                                   or "signal N core 0|1"
   t-sv signals READY [SECONDS]    count SIGTERMs: create READY, wait up
                                   to SECONDS (30) for one, then 2 s more,
                                   and print "pid PID" and "signals N"

   Each call also prints "pid PID", for the trace.  */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1 << 20)

static int failures;

static void
ok (int cond, const char *what)
{
  printf ("%s: %s\n", cond ? "PASS" : "FAIL", what);
  failures += !cond;
}

static unsigned char
pat (long i)
{
  return (unsigned char) (i * 7 % 251 + 1);
}

static const struct { long off, len; } data[] = {
  { 64 << 10, 8 << 10 }, { 512 << 10, 100 },
};

/* PATH opened O_RDWR, or as HOW says: "wronly", "append" (O_RDWR |
   O_APPEND).  */
static int
open_file (const char *path, const char *how)
{
  int flags = how == NULL ? O_RDWR
	      : strcmp (how, "wronly") == 0 ? O_WRONLY
	      : strcmp (how, "append") == 0 ? O_RDWR | O_APPEND : -1;
  int fd = flags < 0 ? (errno = EINVAL, -1) : open (path, flags);

  if (fd < 0)
    {
      perror (path);
      exit (2);
    }
  return fd;
}

static int
prep (const char *path)
{
  int fd = open (path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  unsigned char b[8 << 10];

  if (fd < 0 || ftruncate (fd, MIB) < 0)
    {
      perror (path);
      return 2;
    }
  for (size_t d = 0; d < sizeof data / sizeof data[0]; d++)
    {
      for (long i = 0; i < data[d].len; i++)
	b[i] = pat (data[d].off + i);
      if (pwrite (fd, b, (size_t) data[d].len, data[d].off) != data[d].len)
	{
	  perror ("pwrite");
	  return 2;
	}
    }
  return close (fd) == 0 ? 0 : 2;
}

static int
check (const char *path, const char *want, long len)
{
  int fd = open_file (path, NULL), kept = 1, punched = 1;
  unsigned char b[8 << 10];
  struct stat st;
  char what[256];

  for (size_t d = 0; d < sizeof data / sizeof data[0]; d++)
    {
      int zeros = strcmp (want, "punched") == 0 && d == 0;

      if (pread (fd, b, (size_t) data[d].len, data[d].off) != data[d].len)
	kept = punched = 0;
      for (long i = 0; i < data[d].len; i++)
	if (zeros)
	  punched &= b[i] == 0;
	else
	  kept &= b[i] == pat (data[d].off + i);
    }
  ok (kept, "the bytes that held data are unchanged");
  if (strcmp (want, "punched") == 0)
    {
      ok (punched, "the range punched reads as zeros");
      close (fd);
      return failures ? 1 : 0;
    }
  fstat (fd, &st);
  long alloc = (long) st.st_blocks * 512;
  off_t hole = lseek (fd, 0, SEEK_HOLE);
  if (strcmp (want, "alloc") == 0)
    {
      snprintf (what, sizeof what, "[0, %ld) allocated (%ld bytes, first "
		"hole at %ld)", len, alloc, (long) hole);
      ok (alloc >= len && hole >= len, what);
    }
  else
    {
      snprintf (what, sizeof what, "[0, %ld) not allocated (%ld bytes)",
		len, alloc);
      ok (alloc < len / 2, what);
    }
  close (fd);
  return failures ? 1 : 0;
}

static int
range (const char *path, long long off, long long len)
{
  int fd = open_file (path, NULL);
  struct stat st;
  char what[256];
  off_t data = lseek (fd, off, SEEK_DATA), hole = lseek (fd, off, SEEK_HOLE);

  fstat (fd, &st);
  snprintf (what, sizeof what, "[%lld, %lld) allocated (data at %lld, "
	    "hole at %lld, size %lld)", off, off + len, (long long) data,
	    (long long) hole, (long long) st.st_size);
  ok (data == off && hole >= off + len && st.st_size == off + len, what);
  close (fd);
  return failures ? 1 : 0;
}

#ifdef __x86_64__
/* i386's system call NR from this x86_64 program (IA32 emulation).  */
static long
int80 (long nr, long a, long b, long c)
{
  long r;

  __asm__ volatile ("int $0x80" : "=a" (r) : "a" (nr), "b" (a), "c" (b),
		    "d" (c) : "memory", "r8", "r9", "r10", "r11");
  return r;
}

/* FILE opened O_RDWR by i386's open (5), which unlike x86_64's does not
   add O_LARGEFILE; -1 with an UNSUPPORTED line if this kernel cannot.  */
static int
open32 (const char *path)
{
  pid_t pid = fork ();
  int status, fd;
  char *p;

  /* Without IA32 emulation, int $0x80 kills: tried in a child first.  */
  if (pid == 0)
    _exit (int80 (20, 0, 0, 0) == getpid () ? 0 : 1);	/* getpid */
  if (pid < 0 || waitpid (pid, &status, 0) != pid || !WIFEXITED (status)
      || WEXITSTATUS (status) != 0)
    {
      printf ("UNSUPPORTED: i386's open: no IA32 emulation in this kernel\n");
      return -1;
    }
  p = mmap (NULL, 4096, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  if (p == MAP_FAILED || strlen (path) >= 4096)
    return -1;
  strcpy (p, path);
  fd = (int) int80 (5, (long) p, O_RDWR, 0);
  if (fd < 0 || (fcntl (fd, F_GETFL) & 0100000))
    {
      printf ("UNSUPPORTED: i386's open: %s\n", fd < 0 ? strerror (-fd)
	      : "O_LARGEFILE set all the same");
      return -1;
    }
  return fd;
}
#endif

static void
result (int err)
{
  printf ("pid %ld\nresult %d\n", (long) getpid (), err);
  fflush (stdout);
}

/* The system call as the ABI takes it: on i386, each 64-bit value as two
   words, low first (ia32_fallocate).  */
static int
raw (int fd, int mode, long long off, long long len)
{
#ifdef __i386__
  long r = syscall (SYS_fallocate, fd, mode, (unsigned) off,
		    (unsigned) (off >> 32), (unsigned) len,
		    (unsigned) (len >> 32));
#else
  long r = syscall (SYS_fallocate, fd, mode, off, len);
#endif
  return r == 0 ? 0 : errno;
}

struct call
{
  int fd, mode, err;
  long long off, len;
};

static void *
in_thread (void *arg)
{
  struct call *c = arg;

  c->err = raw (c->fd, c->mode, c->off, c->len);
  return NULL;
}

/* Whether another process sees our write lock on [0, 100).  */
static int
still_locked (int fd)
{
  pid_t me = getpid (), pid = fork ();
  int status;

  if (pid == 0)
    {
      struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			 .l_start = 0, .l_len = 100 };

      _exit (fcntl (fd, F_GETLK, &l) == 0 && l.l_type == F_WRLCK
	     && l.l_pid == me ? 0 : 1);
    }
  return pid > 0 && waitpid (pid, &status, 0) == pid && WIFEXITED (status)
	 && WEXITSTATUS (status) == 0;
}

static int
lock (const char *path)
{
  int fd = open_file (path, NULL), err;
  struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
		     .l_start = 0, .l_len = 100 };

  if (fcntl (fd, F_SETLK, &l) < 0 || lseek (fd, 12345, SEEK_SET) != 12345)
    {
      perror ("F_SETLK");
      return 2;
    }
  ok (still_locked (fd), "the record lock is seen before the call");
  err = posix_fallocate (fd, 0, MIB);
  result (err);
  ok (err == 0, "posix_fallocate succeeds");
  ok (still_locked (fd), "the record lock is still held after the call");
  ok (lseek (fd, 0, SEEK_CUR) == 12345, "the file offset has not moved");
  return failures ? 1 : 0;
}

static int
wait_go (const char *path, const char *ready, const char *go)
{
  int fd = open_file (path, NULL), r;
  struct timespec ms10 = { 0, 10 * 1000 * 1000 };

  r = open (ready, O_WRONLY | O_CREAT, 0644);
  if (r < 0)
    {
      perror (ready);
      return 2;
    }
  close (r);
  for (int i = 0; i < 6000 && access (go, F_OK) != 0; i++)
    nanosleep (&ms10, NULL);
  result (raw (fd, 0, 0, MIB));
  return 0;
}

static long
now_us (void)
{
  struct timespec t;

  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000L + t.tv_nsec / 1000;
}

static int
pair (const char *big, long len, const char *small)
{
  int p[2], fd = open_file (small, NULL), status;
  long t[2], b0, b1;
  char c;
  pid_t pid;

  if (pipe (p) < 0 || (pid = fork ()) < 0)
    {
      perror ("pair");
      return 2;
    }
  if (pid == 0)
    {
      int big_fd = open_file (big, NULL);

      close (p[0]);
      t[0] = now_us ();
      if (write (p[1], "", 1) != 1)
	_exit (2);
      int err = raw (big_fd, 0, 0, len);
      t[1] = now_us ();
      if (write (p[1], t, sizeof t) != sizeof t)
	_exit (2);
      _exit (err == 0 ? 0 : 1);
    }
  close (p[1]);
  if (read (p[0], &c, 1) != 1)
    return 2;
  struct timespec ms10 = { 0, 10 * 1000 * 1000 };
  nanosleep (&ms10, NULL);
  b0 = now_us ();
  int err = raw (fd, 1, 0, 4096);
  b1 = now_us ();
  if (read (p[0], t, sizeof t) != sizeof t || waitpid (pid, &status, 0) != pid)
    return 2;
  printf ("# long call %ld us (%ld to %ld), short call %ld us (%ld to %ld): "
	  "result %d\n", t[1] - t[0], t[0], t[1], b1 - b0, b0, b1, err);
  ok (WIFEXITED (status) && WEXITSTATUS (status) == 0,
      "the long call succeeds");
  if (t[1] - b0 < 20000)
    printf ("UNSUPPORTED: the short call returned before the long one "
	    "(the long call ended %ld us after the short one began: too "
	    "soon to tell)\n", t[1] - b0);
  else
    {
      char what[200];

      snprintf (what, sizeof what, "the short call returned before the "
		"long one (%ld us, the long one %ld us)", b1 - b0, t[1] - t[0]);
      ok (b1 < t[1], what);
    }
  return failures ? 1 : 0;
}

static int
killed (const char *path, long len)
{
  int fd = open_file (path, NULL), status;
  struct stat st;
  struct timespec ms20 = { 0, 20 * 1000 * 1000 };
  pid_t pid = fork ();
  char what[200];

  if (pid < 0)
    return 2;
  if (pid == 0)
    _exit (raw (fd, 0, 0, len));
  nanosleep (&ms20, NULL);
  kill (pid, SIGKILL);
  waitpid (pid, &status, 0);
  printf ("# the child %s\n", WIFSIGNALED (status) ? "was killed"
	  : "had finished");
  int err = raw (fd, 0, 0, MIB);
  result (err);
  ok (err == 0, "a later call on the file succeeds");
  fstat (fd, &st);
  snprintf (what, sizeof what, "the size is 1 MiB or %ld (%ld)", len,
	    (long) st.st_size);
  ok (st.st_size == MIB || st.st_size == len, what);
  return failures ? 1 : 0;
}

/* How many descriptors process PID has.  */
static int
count_fds (pid_t pid)
{
  char cmd[64], line[64];
  int n = 0;
  FILE *p;

  snprintf (cmd, sizeof cmd, "ls /proc/%ld/fd", (long) pid);
  p = popen (cmd, "r");
  if (p == NULL)
    return -1;
  while (fgets (line, sizeof line, p) != NULL)
    n++;
  return pclose (p) == 0 ? n : -1;
}

static int
fds (const char *path, int n)
{
  int fd = open_file (path, NULL), before, after, bad = 0;
  pid_t sv = getppid ();
  char what[200];

  raw (fd, 1, 0, 4096);		/* the supervisor's threads started */
  before = count_fds (sv);
  for (int i = 0; i < n; i++)
    bad += raw (fd, i % 2, (long long) i * 4096, 4096) == EBADF;
  after = count_fds (sv);
  snprintf (what, sizeof what, "the supervisor (%ld) has as many "
	    "descriptors after %d calls as before (%d, %d)", (long) sv, n,
	    before, after);
  ok (before > 0 && before == after, what);
  ok (bad == 0, "no call got EBADF");
  return failures ? 1 : 0;
}

/* threads: T threads, each with a file of its own, make a mode-0 call
   and K raw KEEP_SIZE calls at once; at most T calls are ever in
   flight, so the supervisor needs at most T threads waiting or
   answering, its main thread, and one waiting more (two threads taking
   calls at once may each start one: T + 3 in all).  */
static const char *threads_dir;
static int threads_k, threads_ready, threads_n;

static void *
caller (void *arg)
{
  char path[4096];
  int bad = 0;

  snprintf (path, sizeof path, "%s/thread%ld", threads_dir, (long) arg);
  int fd = open (path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  __atomic_add_fetch (&threads_ready, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n (&threads_ready, __ATOMIC_SEQ_CST) < threads_n)
    ;
  /* EOPNOTSUPP where the filesystem has no fallocate (ext2).  */
  bad += raw (fd, 0, 0, 1 << 20) != 0;
  for (int k = 0; k < threads_k; k++)
    {
      int r = raw (fd, 1, (long long) k * 4096, 4096);
      bad += r != 0 && r != EOPNOTSUPP;
    }
  close (fd);
  unlink (path);
  return (void *) (long) bad;
}

static int
supervisor_threads (pid_t pid)
{
  char path[64], line[128];
  int n = -1;

  snprintf (path, sizeof path, "/proc/%ld/status", (long) pid);
  FILE *f = fopen (path, "r");
  while (f && fgets (line, sizeof line, f))
    if (sscanf (line, "Threads: %d", &n) == 1)
      break;
  if (f)
    fclose (f);
  return n;
}

static int
threads (const char *dir, int t, int k)
{
  pthread_t th[256];
  long bad = 0;
  char what[200];

  threads_dir = dir, threads_k = k, threads_n = t;
  for (long i = 0; i < t && i < 256; i++)
    pthread_create (&th[i], NULL, caller, (void *) i);
  for (int i = 0; i < t && i < 256; i++)
    {
      void *r;
      pthread_join (th[i], &r);
      bad += (long) r;
    }
  int n = supervisor_threads (getppid ());
  snprintf (what, sizeof what, "%d callers, %d calls each: the supervisor "
	    "has at most %d threads (%d)", t, k, t + 3, n);
  ok (n > 0 && n <= t + 3, what);
  ok (bad == 0, "every call got 0, KEEP_SIZE the kernel's answer (0 or "
      "EOPNOTSUPP)");
  /* Each of them ends a thread the burst left, until two wait (FIRST in
     supervise/pool.c): with the main thread, and one about to end, 4.  */
  char path[4096];
  snprintf (path, sizeof path, "%s/after", dir);
  int fd = open (path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  for (int i = 0; i < 64; i++)
    raw (fd, 1, (long long) i * 4096, 4096);
  close (fd);
  unlink (path);
  for (int i = 0; i < 200 && (n = supervisor_threads (getppid ())) > 4; i++)
    usleep (10000);
  snprintf (what, sizeof what, "then 64 calls one at a time: the "
	    "supervisor has at most 4 threads (%d)", n);
  ok (n > 0 && n <= 4, what);
  return failures ? 1 : 0;
}

/* stopped: with the supervisor (the parent) stopped for 3 s, a raw
   KEEP_SIZE call returns at once: without a policy the filter leaves
   modes other than 0 to the kernel.  */
static int
stopped (const char *path)
{
  int fd = open_file (path, NULL);
  pid_t sv = getppid (), h;
  struct timespec a, b;
  char what[200];

  if (kill (sv, SIGSTOP) < 0)
    return 2;
  if ((h = fork ()) == 0)
    {
      sleep (3);
      kill (sv, SIGCONT);
      _exit (0);
    }
  clock_gettime (CLOCK_MONOTONIC, &a);
  int r = raw (fd, 1, 0, 4096);
  clock_gettime (CLOCK_MONOTONIC, &b);
  double dt = (double) (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
  waitpid (h, NULL, 0);
  snprintf (what, sizeof what, "KEEP_SIZE with the supervisor stopped: "
	    "answered at once (%.2f s, result %d)", dt, r);
  ok (dt < 1.5, what);
  return failures ? 1 : 0;
}

static int
modes (const char *path)
{
  static const int list[] = { 1, 2, 3, 8, 9, 0x10, 0x11, 0x12, 0x20, 0x21,
			      0x40, 0x41, 0x80, 0x100, -1 };
  static const long long args[][2] = { { 0, 4096 }, { 4096, 0 },
				       { -1, 4096 }, { 0, -4096 } };
  int fd = open_file (path, NULL);

  for (size_t m = 0; m < sizeof list / sizeof list[0]; m++)
    for (size_t a = 0; a < sizeof args / sizeof args[0]; a++)
      printf ("mode %d off %lld len %lld result %d\n", list[m], args[a][0],
	      args[a][1], raw (fd, list[m], args[a][0], args[a][1]));
  return 0;
}

static volatile sig_atomic_t signals;

static void
count (int sig)
{
  (void) sig;
  signals++;
}

static int
count_signals (const char *ready, int seconds)
{
  struct sigaction sa;
  struct timespec ms10 = { 0, 10 * 1000 * 1000 };
  int fd, i;

  memset (&sa, 0, sizeof sa);
  sa.sa_handler = count;
  sigaction (SIGTERM, &sa, NULL);
  fd = open (ready, O_WRONLY | O_CREAT, 0644);
  if (fd < 0)
    {
      perror (ready);
      return 2;
    }
  close (fd);
  for (i = 0; i < seconds * 100 && signals == 0; i++)
    nanosleep (&ms10, NULL);
  for (i = 0; i < 200; i++)
    nanosleep (&ms10, NULL);
  printf ("pid %ld\nsignals %d\n", (long) getpid (), (int) signals);
  return 0;
}

static pthread_barrier_t many_start;
static long many_len;

struct many_call
{
  int fd, err;
  pthread_t t;
};

static void *
many_caller (void *arg)
{
  struct many_call *c = arg;

  pthread_barrier_wait (&many_start);
  c->err = raw (c->fd, 0, 0, many_len);
  return NULL;
}

static int
many (const char *dir, int n, long len)
{
  struct many_call c[64];
  struct rlimit nofile;
  char path[4096];

  if (n < 1 || n > 64)
    return 2;
  many_len = len;
  pthread_barrier_init (&many_start, NULL, (unsigned) n);
  for (int i = 0; i < n; i++)
    {
      snprintf (path, sizeof path, "%s/many%d", dir, i);
      c[i].fd = open (path, O_RDWR | O_CREAT | O_TRUNC, 0644);
      if (c[i].fd < 0)
	{
	  perror (path);
	  return 2;
	}
    }
  for (int i = 0; i < n; i++)
    {
      int err = pthread_create (&c[i].t, NULL, many_caller, &c[i]);

      /* Not waited for at the barrier: said, and every thread ended.  */
      if (err)
	{
	  fprintf (stderr, "t-sv: pthread_create: %s\n", strerror (err));
	  _exit (3);
	}
    }
  printf ("results");
  for (int i = 0; i < n; i++)
    {
      pthread_join (c[i].t, NULL);
      printf (" %d", c[i].err);
    }
  getrlimit (RLIMIT_NOFILE, &nofile);
  printf ("\nnofile %ld %ld\n", (long) nofile.rlim_cur, (long) nofile.rlim_max);
  return 0;
}

static int
status (char **argv)
{
  int st;
  pid_t pid = fork ();

  if (pid == 0)
    {
      /* Every signal default and unblocked, as from a terminal's shell:
	 a harness may ignore or block some (DejaGnu's expect: 32 and 33,
	 which the C library's own calls refuse to reset).  */
      long dfl[16] = { 0 };
      unsigned long none[4] = { 0 };

      for (int s = 1; s < NSIG; s++)
	if (s != SIGKILL && s != SIGSTOP)
	  syscall (SYS_rt_sigaction, s, dfl, NULL, (NSIG - 1) / 8);
      syscall (SYS_rt_sigprocmask, SIG_SETMASK, none, NULL, (NSIG - 1) / 8);
      execvp (argv[0], argv);
      _exit (127);
    }
  if (pid < 0 || waitpid (pid, &st, 0) != pid)
    return 2;
  if (WIFSIGNALED (st))
    printf ("signal %d core %d\n", WTERMSIG (st), WCOREDUMP (st) ? 1 : 0);
  else
    printf ("exit %d\n", WEXITSTATUS (st));
  return 0;
}

/* <linux/fs.h>'s, which musl-gcc does not have.  */
#ifndef FS_IOC_GETFLAGS
# define FS_IOC_GETFLAGS _IOR ('f', 1, long)
# define FS_IOC_SETFLAGS _IOW ('f', 2, long)
#endif
#ifndef FS_IMMUTABLE_FL
# define FS_IMMUTABLE_FL 0x00000010
#endif

/* errnos: each errno a fallocate call can get, provoked on purpose (the
   kernel's checks in vfs_fallocate, and on a filesystem without
   fallocate, ext2, the supervisor's fallback), each checked to arrive
   unchanged.  SV: run under the supervisor, whose answer carries the
   errno back (supervise/answer.c); unsupervised, the kernel's answers
   (the control: EOPNOTSUPP where the supervisor would fall back), and
   no EINTR case (the kernel answers at once).  */
static void
errno_is (const char *what, int got, int want)
{
  char line[300];

  snprintf (line, sizeof line, "%s: %s (got %d %s)", what,
	    strerror (want), got, got ? strerror (got) : "success");
  ok (got == want, line);
}

static void
on_alarm (int sig)
{
  (void) sig;
}

/* Whether every thread of process PID is stopped, waiting up to 10 s: a
   SIGSTOP takes effect a while after kill returns.  */
static int
all_stopped (pid_t pid)
{
  struct timespec ms10 = { 0, 10 * 1000 * 1000 };
  char path[300];

  for (int i = 0; i < 1000; i++)
    {
      int running = 0;
      struct dirent *e;
      DIR *d;

      snprintf (path, sizeof path, "/proc/%ld/task", (long) pid);
      if ((d = opendir (path)) == NULL)
	return 0;
      while ((e = readdir (d)) != NULL && !running)
	{
	  char buf[512], *p;
	  FILE *f;

	  if (e->d_name[0] == '.')
	    continue;
	  snprintf (path, sizeof path, "/proc/%ld/task/%s/stat", (long) pid,
		    e->d_name);
	  if ((f = fopen (path, "r")) == NULL)
	    continue;
	  buf[0] = '\0';
	  if (fgets (buf, sizeof buf, f) == NULL)
	    buf[0] = '\0';
	  fclose (f);
	  p = strrchr (buf, ')');
	  running = p == NULL || p[1] != ' ' || (p[2] != 'T' && p[2] != 't');
	}
      closedir (d);
      if (!running)
	return 1;
      nanosleep (&ms10, NULL);
    }
  return 0;
}

static char swap_path[4096];

static void
swap_off (void)
{
  if (swap_path[0])
    swapoff (swap_path);
}

static int
errnos (const char *dir, int sv)
{
  char path[4096];
  int fd, rd, p[2], null, dead, st;
  struct statvfs vfs;

  snprintf (path, sizeof path, "%s/errnos", dir);
  fd = open (path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  rd = open (path, O_RDONLY);
  null = open ("/dev/null", O_WRONLY);
  if (fd < 0 || rd < 0 || null < 0 || pipe (p) < 0 || fstatvfs (fd, &vfs) < 0
      || (dead = dup (fd)) < 0 || close (dead) < 0)
    {
      perror ("errnos");
      return 2;
    }
  /* Mode 0, which the supervisor is sent with or without a policy.  */
  errno_is ("a descriptor not open", raw (dead, 0, 0, 4096), EBADF);
  errno_is ("a descriptor open read-only", raw (rd, 0, 0, 4096), EBADF);
  errno_is ("length 0", raw (fd, 0, 0, 0), EINVAL);
  errno_is ("a negative offset", raw (fd, 0, -4096, 4096), EINVAL);
  errno_is ("a pipe", raw (p[1], 0, 0, 4096), ESPIPE);
  errno_is ("/dev/null", raw (null, 0, 0, 4096), ENODEV);
  errno_is ("offset + length past the largest offset",
	    raw (fd, 0, 0x7fffffffffff0000LL, 0x20000), EFBIG);
  /* Twice the filesystem's size: ext2 refuses (EOPNOTSUPP), then the
     fallback finds too little space.  */
  long long big = (long long) vfs.f_blocks * (long long) vfs.f_frsize * 2;
  int r = raw (fd, 0, 0, big);
  if (!sv && r == EOPNOTSUPP)
    errno_is ("twice the filesystem's size, unsupervised on a filesystem "
	      "without fallocate", r, EOPNOTSUPP);
  else
    errno_is ("twice the filesystem's size", r, ENOSPC);
  /* A mode no kernel knows: sent to the supervisor under a policy or a
     trace only; the kernel's answer either way.  */
  errno_is ("mode 0x100", raw (fd, 0x100, 0, 4096), EOPNOTSUPP);

  /* Immutable (chattr +i): EPERM.  */
  int flags = 0;
  if (ioctl (fd, FS_IOC_GETFLAGS, &flags) < 0
      || (flags |= FS_IMMUTABLE_FL, ioctl (fd, FS_IOC_SETFLAGS, &flags) < 0))
    printf ("UNSUPPORTED: an immutable file: FS_IOC_SETFLAGS: %s\n",
	    strerror (errno));
  else
    {
      errno_is ("an immutable file", raw (fd, 0, 0, 4096), EPERM);
      flags &= ~FS_IMMUTABLE_FL;
      ioctl (fd, FS_IOC_SETFLAGS, &flags);
    }

  /* An active swap file: ETXTBSY.  */
  static char zeros[1 << 20];
  snprintf (swap_path, sizeof swap_path, "%s/errnos-swap", dir);
  int sfd = open (swap_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  for (int i = 0; sfd >= 0 && i < 4; i++)
    if (pwrite (sfd, zeros, sizeof zeros, (off_t) i << 20) != sizeof zeros)
      break;
  if (sfd >= 0)
    fsync (sfd);
  pid_t pid = fork ();
  if (pid == 0)
    {
      int n = open ("/dev/null", O_WRONLY);
      dup2 (n, 1);
      dup2 (n, 2);
      execlp ("mkswap", "mkswap", swap_path, (char *) NULL);
      _exit (127);
    }
  if (pid < 0 || waitpid (pid, &st, 0) != pid || !WIFEXITED (st)
      || WEXITSTATUS (st) != 0)
    printf ("UNSUPPORTED: an active swap file: mkswap failed or is "
	    "missing\n");
  else if (swapon (swap_path, 0) < 0)
    printf ("UNSUPPORTED: an active swap file: swapon: %s\n",
	    strerror (errno));
  else
    {
      atexit (swap_off);
      errno_is ("an active swap file", raw (sfd, 0, 0, 8192), ETXTBSY);
      swapoff (swap_path);
      swap_path[0] = '\0';
    }
  close (sfd);
  snprintf (path, sizeof path, "%s/errnos-swap", dir);
  unlink (path);

  /* A signal while the call waits for the supervisor (stopped, our
     parent): EINTR, from a handler without SA_RESTART.  */
  if (sv)
    {
      struct sigaction sa;
      struct itimerval it = { { 0, 0 }, { 0, 300 * 1000 } };
      pid_t parent = getppid (), h;

      memset (&sa, 0, sizeof sa);
      sa.sa_handler = on_alarm;
      sigaction (SIGALRM, &sa, NULL);
      if (kill (parent, SIGSTOP) < 0)
	return 2;
      if ((h = fork ()) == 0)
	{
	  sleep (15);
	  kill (parent, SIGCONT);
	  _exit (0);
	}
      if (!all_stopped (parent))
	{
	  kill (parent, SIGCONT);
	  printf ("FAIL: a signal while the supervisor is stopped: not "
		  "stopped after 10 s\n");
	  return 1;
	}
      setitimer (ITIMER_REAL, &it, NULL);
      r = raw (fd, 0, 0, 4096);
      kill (parent, SIGCONT);
      kill (h, SIGKILL);
      waitpid (h, NULL, 0);
      errno_is ("a signal while the supervisor is stopped", r, EINTR);
    }
  close (fd);
  snprintf (path, sizeof path, "%s/errnos", dir);
  unlink (path);
  return failures ? 1 : 0;
}

int
main (int argc, char **argv)
{
  /* A line at a time: a run that a timeout kills keeps what it said.  */
  setvbuf (stdout, NULL, _IOLBF, 0);
  if (argc >= 3 && strcmp (argv[1], "prep") == 0)
    return prep (argv[2]);
  if (argc == 5 && strcmp (argv[1], "check") == 0)
    return check (argv[2], argv[3], atol (argv[4]));
  if (argc == 5 && strcmp (argv[1], "range") == 0)
    return range (argv[2], atoll (argv[3]), atoll (argv[4]));
  if ((argc == 5 || argc == 6) && strcmp (argv[1], "posix") == 0)
    {
      result (posix_fallocate (open_file (argv[2], argc == 6 ? argv[5] : NULL),
			       atoll (argv[3]), atoll (argv[4])));
      return 0;
    }
  if ((argc == 6 || argc == 7) && strcmp (argv[1], "raw") == 0)
    {
      result (raw (open_file (argv[2], argc == 7 ? argv[6] : NULL), atoi (argv[3]),
		   atoll (argv[4]), atoll (argv[5])));
      return 0;
    }
  if (argc == 6 && strcmp (argv[1], "open32") == 0)
    {
#ifdef __x86_64__
      int fd = open32 (argv[2]);

      if (fd >= 0)
	result (raw (fd, atoi (argv[3]), atoll (argv[4]), atoll (argv[5])));
#else
      printf ("UNSUPPORTED: i386's open from x86_64: not an x86_64 program\n");
#endif
      return 0;
    }
  if (argc == 6 && strcmp (argv[1], "nodump") == 0)
    {
      int fd = open_file (argv[2], NULL);

      if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
	{
	  perror ("PR_SET_DUMPABLE");
	  return 2;
	}
      result (raw (fd, atoi (argv[3]), atoll (argv[4]), atoll (argv[5])));
      return 0;
    }
  if (argc == 6 && strcmp (argv[1], "x32") == 0)
    {
#ifdef __x86_64__
      /* x32's number (__X32_SYSCALL_BIT), its arguments as x86_64's.  */
      long r = syscall (SYS_fallocate | 0x40000000L, open_file (argv[2], NULL),
			atoi (argv[3]), atoll (argv[4]), atoll (argv[5]));

      result (r == 0 ? 0 : errno);
#else
      printf ("UNSUPPORTED: x32's number: not an x86_64 program\n");
#endif
      return 0;
    }
  if (argc == 6 && strcmp (argv[1], "thread") == 0)
    {
      struct call c = { open_file (argv[2], NULL), atoi (argv[3]), -1,
			atoll (argv[4]), atoll (argv[5]) };
      pthread_t t;

      if (pthread_create (&t, NULL, in_thread, &c) != 0
	  || pthread_join (t, NULL) != 0)
	return 2;
      result (c.err);
      return 0;
    }
  if (argc == 3 && strcmp (argv[1], "lock") == 0)
    return lock (argv[2]);
  if (argc == 5 && strcmp (argv[1], "wait") == 0)
    return wait_go (argv[2], argv[3], argv[4]);
  if (argc == 5 && strcmp (argv[1], "pair") == 0)
    return pair (argv[2], atol (argv[3]), argv[4]);
  if (argc == 4 && strcmp (argv[1], "fds") == 0)
    return fds (argv[2], atoi (argv[3]));
  if (argc == 3 && strcmp (argv[1], "stopped") == 0)
    return stopped (argv[2]);
  if (argc == 5 && strcmp (argv[1], "threads") == 0)
    return threads (argv[2], atoi (argv[3]), atoi (argv[4]));
  if (argc == 3 && strcmp (argv[1], "modes") == 0)
    return modes (argv[2]);
  if (argc >= 3 && strcmp (argv[1], "status") == 0)
    return status (argv + 2);
  if (argc == 5 && strcmp (argv[1], "many") == 0)
    return many (argv[2], atoi (argv[3]), atol (argv[4]));
  if ((argc == 3 || argc == 4) && strcmp (argv[1], "signals") == 0)
    return count_signals (argv[2], argc == 4 ? atoi (argv[3]) : 30);
  if ((argc == 3 || argc == 4) && strcmp (argv[1], "errnos") == 0)
    return errnos (argv[2], argc == 4 && strcmp (argv[3], "sv") == 0);
  if (argc == 4 && strcmp (argv[1], "killed") == 0)
    return killed (argv[2], atol (argv[3]));
  fprintf (stderr, "usage: see tests/progs/t-sv.c\n");
  return 2;
}
