/* t-promise DIR ERRNO [nounshare|docker]: promises of the fallback that
   an outside review broke (issue 15), each a case that failed before.
   The program makes its own files first (some need the real fallocate:
   blocks kept past the end of file), then makes fallocate fail with
   ERRNO (ENOSYS or EOPNOTSUPP) for itself, and with "nounshare" or
   "docker" also refuses unshare (EPERM) and, with "docker", answers
   clone3 with ENOSYS, as Docker's default profile does.

   Dynamic, so that its pthread_mutex_lock, pthread_mutex_unlock,
   pwrite64 and madvise are the ones libfallocate calls:
   - keep: a file with a hole inside and blocks kept past its end
     (KEEP_SIZE), whose st_blocks covers its size: the hole allocated;
   - handler: a signal whose handler calls posix_fallocate on a file of
     the same lock stripe, raised in every gap of the lock (inside the
     interposed mutex and pthread_once calls, if the library makes them,
     the first call of the process among them) and at random for two
     seconds from another thread: no call waits for itself;
   - xfsz: past RLIMIT_FSIZE through an O_RDWR|O_DIRECT descriptor,
     EFBIG and SIGXFSZ in the calling thread, as from the kernel;
   - fsize inside: RLIMIT_FSIZE below the file's size, holes above the
     limit: allocated (the kernel's answer) or EFBIG, never SIGXFSZ;
   - own: O_WRONLY, O_WRONLY|O_APPEND with a hole inside, O_RDWR|O_DIRECT
     past the end of file (descriptors of the library's own): allocated,
     data kept;
   - mode 0400: a file whose mode changed to 0400 since the caller opened it
     O_WRONLY, with a hole inside: allocated all the same; through
     O_RDWR|O_DIRECT past its end, or O_WRONLY|O_APPEND over a hole inside:
     EBADF, as documented;
   - lease: a write lease and a call that needs a descriptor of its own:
     EBADF at once, the lease kept;
   - allocated: a range of data ending in zero bytes, rewritten by a
     thread during the calls: no byte written into it (tmpfs, where holes
     cannot be found, wrote one per block);
   - devlock: a record lock on a fuseblk filesystem's device kept;
   - append fsize: an append-only file past RLIMIT_FSIZE through
     O_RDWR|O_APPEND: EFBIG, nothing written;
   - extended: a write failing part way, after another writer extended
     the file: EIO, and the size not set back over the other's byte;
   - writeback: the advice allocating nothing until writeback (modelled:
     madvise does nothing, msync allocates what it writes back), several
     holes in one mapped window: all allocated;
   - crossed: two threads, each inside a call on a file of its own (two
     lock stripes), each interrupted by a handler that calls on the
     other's file: both return (neither waits for the other);
   - clone: while a thread is inside a call, a child made by clone(),
     which runs no atfork handler, calls on a file of the same lock
     stripe: it returns (the holder is no thread of its);
   - small stack: from a signal handler on a 12 KiB alternate stack with
     a guard page below it, in this dynamically linked program (the
     library's calls bound when it was loaded, not lazily there): a call
     larger than the free space (ENOSPC or EFBIG) and one through O_WRONLY
     over a hole inside (a thread and a descriptor of the library's own):
     no crash;
   - nofile 0: RLIMIT_NOFILE 0, past the end of file through O_RDWR|
     O_APPEND (a descriptor of the library's own needed): EBADF, as
     documented, the size kept;
   - cancel: a thread whose cancellation is pending (deferred) calls
     posix_fallocate on an overflow (EFBIG, after the empty write of the
     swap probe) and through O_WRONLY over a hole (a thread of the
     library's own, joined): both return, as from the kernel, which has
     no cancellation point there;
   - truncated: another writer truncates the file to 0 right after the
     library populates a 16 MiB range (a process would do it the same
     way): 0 with the range allocated and the size its end, or EIO,
     never 0 with the size 0 (where FIEMAP finds holes);
   - writeback failing: the same model, holes in two 64 MiB windows, the
     second msync failing with ENOSPC (as writeback does on a full
     filesystem): ENOSPC, or 0 with no hole left;
   - turns: two threads appending to an append-only file through
     O_APPEND descriptors, in step unless one waits: exactly the size;
   - pipe: a pipe that another thread closes while a call works through
     a descriptor of its own reaches EOF at its reader during the call;
   - two processes: each posix_fallocate (fd, 0, 16.5 MiB) through
     O_WRONLY|O_APPEND descriptors on one empty file, their writes made
     in step: the size is exactly 16.5 MiB.  */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>
#include <fallocate.h>
#include "tcheck.h"
#include "fa-deny.h"

#define MiB (1 << 20)

static const char *dir;
static pid_t main_tid;

static pid_t
tid (void)
{
  return (pid_t) syscall (SYS_gettid);
}

/* Run FN in a child under a deadline of SECS: its exit status, or -1 if
   it hung (killed) or died of a signal.  */
static int
in_child (int (*fn) (void), int secs)
{
  pid_t pid = fork ();
  int st;

  if (pid == 0)
    {
      int r = fn ();
      fflush (stdout);
      _exit (r);
    }
  for (int i = 0; i < secs * 20 && waitpid (pid, &st, WNOHANG) == 0; i++)
    usleep (50000);
  if (waitpid (pid, &st, WNOHANG) == 0)
    {
      kill (pid, SIGKILL);
      waitpid (pid, &st, 0);
      return -1;
    }
  return WIFEXITED (st) ? WEXITSTATUS (st) : -1;
}

/* keep */

static int keep_fd = -1;
static char keep_path[4096];

/* Made before the filter: blocks kept past the end of file.  */
static void
keep_make (void)
{
  int fd = t_create (dir, "keep", keep_path, sizeof keep_path);

  t_put (fd, 0, 256 << 10, 1);
  t_put (fd, 768 << 10, 256 << 10, 2);
  if (fallocate64 (fd, FALLOC_FL_KEEP_SIZE, MiB, MiB) < 0)
    t_unsupported ("keep: FALLOC_FL_KEEP_SIZE here: %s", strerror (errno));
  else if (t_alloc (fd) < t_size (fd))
    t_unsupported ("keep: st_blocks does not cover the size (%lld of %lld)",
		   (long long) t_alloc (fd), (long long) t_size (fd));
  else
    {
      keep_fd = fd;
      return;
    }
  close (fd);
  unlink (keep_path);
}

static void
keep (void)
{
  if (keep_fd < 0)
    return;
  int e = posix_fallocate64 (keep_fd, 0, MiB);
  t_ok (e == 0 && t_nohole (keep_fd, 0, MiB), "keep: the hole of a file "
	"whose st_blocks covers its size allocated (posix_fallocate %d)", e);
  t_ok (t_same (keep_fd, 0, 256 << 10, 1)
	&& t_same (keep_fd, 768 << 10, 256 << 10, 2)
	&& t_zero (keep_fd, 256 << 10, 512 << 10), "keep: data kept");
  close (keep_fd);
  unlink (keep_path);
}

/* handler */

static int handler_fd, big_fd;
static volatile sig_atomic_t armed, raised, handled, handler_fail;

static void
on_usr1 (int sig)
{
  (void) sig;
  int save = errno;
  handled++;
  if (posix_fallocate64 (handler_fd, 0, 4096) != 0)
    handler_fail++;
  errno = save;
}

/* The library's mutex calls, if it makes any: the signal lands right
   after the lock is taken and right before it is let go.  */
int
pthread_mutex_lock (pthread_mutex_t *m)
{
  static int (*real) (pthread_mutex_t *);
  if (!real)
    real = (int (*) (pthread_mutex_t *)) dlsym (RTLD_NEXT,
						"pthread_mutex_lock");
  int r = real (m);
  if (armed && tid () == main_tid)
    {
      raised++;
      raise (SIGUSR1);
    }
  return r;
}

int
pthread_mutex_unlock (pthread_mutex_t *m)
{
  static int (*real) (pthread_mutex_t *);
  if (!real)
    real = (int (*) (pthread_mutex_t *)) dlsym (RTLD_NEXT,
						"pthread_mutex_unlock");
  if (armed && tid () == main_tid)
    {
      raised++;
      raise (SIGUSR1);
    }
  return real (m);
}

/* And a pthread_once of the lock's, if it takes one: the signal lands
   while its routine runs (the first call of the process).  */
static void (*once_routine) (void);

static void
once_then_raise (void)
{
  once_routine ();
  if (armed && tid () == main_tid)
    {
      raised++;
      raise (SIGUSR1);
    }
}

int
pthread_once (pthread_once_t *once, void (*routine) (void))
{
  static int (*real) (pthread_once_t *, void (*) (void));
  if (!real)
    real = (int (*) (pthread_once_t *, void (*) (void)))
	   dlsym (RTLD_NEXT, "pthread_once");
  if (!armed || tid () != main_tid)
    return real (once, routine);
  once_routine = routine;
  return real (once, once_then_raise);
}

static int
gaps (void)
{
  main_tid = tid ();		/* in a child */
  for (int i = 0; i < 20; i++)
    {
      armed = 1;
      int r = posix_fallocate64 (big_fd, 0, (int64_t) (i + 1) * 8192);
      armed = 0;
      if (r || handler_fail)
	return 2;
    }
  return 0;
}

static atomic_int stop;

static void *
shooter (void *arg)
{
  pthread_t target = *(pthread_t *) arg;
  struct timespec ts = { 0, 20000 };

  while (!atomic_load (&stop))
    {
      pthread_kill (target, SIGUSR1);
      ts.tv_nsec = 1000 + rand () % 50000;
      nanosleep (&ts, NULL);
    }
  return NULL;
}

static int
storm (void)
{
  pthread_t self = pthread_self (), t;
  time_t end = time (NULL) + 2;
  int64_t size = 0;
  int bad = 0;

  pthread_create (&t, NULL, shooter, &self);
  while (time (NULL) < end && !bad)
    {
      /* Up to 4 MiB: the test's filesystems are small.  */
      size = (size + 1 + rand () % 9000) % (4 * MiB) + 1;
      bad = posix_fallocate64 (big_fd, 0, size);
    }
  atomic_store (&stop, 1);
  pthread_join (t, NULL);
  printf ("# storm: %d signals handled, %d handler calls failed, last "
	  "call %d\n", (int) handled, (int) handler_fail, bad);
  return bad || handler_fail || handled == 0 ? 2 : 0;
}

static void
handler (void)
{
  char p1[4096], p2[4096];
  struct sigaction sa = { .sa_handler = on_usr1 };

  big_fd = t_create (dir, "sigbig", p1, sizeof p1);
  handler_fd = t_sibling (dir, big_fd, p2, sizeof p2);
  if (handler_fd < 0)
    handler_fd = t_create (dir, "sibling", p2, sizeof p2);
  sigaction (SIGUSR1, &sa, NULL);
  int r = in_child (gaps, 30);
  t_ok (r == 0, "handler: a signal in each gap of the lock: no call waits "
	"for itself (%s)", r < 0 ? "hung" : r ? "failed" : "returned");
  ftruncate (big_fd, 0);
  /* Valgrind delivers signals at its own pace and runs a FUSE call many
     times slower: a deadlock still never returns.  */
  r = in_child (storm, t_valgrind () ? 240 : 60);
  /* Under valgrind a call may fail for want of what valgrind does not
     emulate; the promise here is that none waits for itself.  */
  t_ok (r == 0 || (r > 0 && t_valgrind ()), "handler: signals at random "
	"for 2 s, the handler calling: no call waits for itself (%s)",
	r < 0 ? "hung" : r ? "failed" : "returned");
  signal (SIGUSR1, SIG_DFL);
  close (big_fd);
  close (handler_fd);
  unlink (p1);
  unlink (p2);
}

/* xfsz, fsize inside */

static volatile sig_atomic_t xfsz_tid;

static void
on_xfsz (int sig)
{
  (void) sig;
  xfsz_tid = tid ();
}

static int xfsz_fd;

static int
xfsz_child (void)
{
  struct rlimit r = { MiB, RLIM_INFINITY };
  struct sigaction sa = { .sa_handler = on_xfsz };

  sigaction (SIGXFSZ, &sa, NULL);
  setrlimit (RLIMIT_FSIZE, &r);
  int e = posix_fallocate64 (xfsz_fd, 0, 2 * MiB);
  printf ("# xfsz: posix_fallocate %d, SIGXFSZ in thread %d (caller %d)\n",
	  e, (int) xfsz_tid, (int) tid ());
  return !(e == EFBIG && xfsz_tid == tid () && t_size (xfsz_fd) == 0);
}

static void
xfsz (void)
{
  char path[4096];
  int fd = t_create (dir, "xfsz", path, sizeof path);

  close (fd);
  xfsz_fd = open (path, O_RDWR | O_DIRECT);
  if (xfsz_fd < 0)
    t_unsupported ("xfsz: O_DIRECT here: %s", strerror (errno));
  else
    {
      int r = in_child (xfsz_child, 60);
      t_ok (r == 0, "xfsz: past RLIMIT_FSIZE through O_RDWR|O_DIRECT: EFBIG "
	    "and SIGXFSZ in the calling thread");
      close (xfsz_fd);
    }
  unlink (path);
}

static int
inside_child (void)
{
  struct rlimit r = { 2 * MiB, RLIM_INFINITY };
  int fd = xfsz_fd;

  signal (SIGXFSZ, SIG_DFL);
  setrlimit (RLIMIT_FSIZE, &r);
  int e = posix_fallocate64 (fd, 0, 8 * MiB);
  printf ("# fsize inside: posix_fallocate %d\n", e);
  if (e == 0)
    return !t_nohole (fd, 0, 8 * MiB);
  return e != EFBIG;
}

static void
fsize_inside (int flags)
{
  char path[4096];
  int fd = t_create (dir, "inside", path, sizeof path);

  t_put (fd, 0, MiB, 3);
  t_put (fd, 6 * MiB, 2 * MiB, 4);
  xfsz_fd = open (path, flags);
  int r = in_child (inside_child, 120);
  t_ok (r == 0, "fsize inside (%s): RLIMIT_FSIZE below the size, holes "
	"above it: allocated or EFBIG, no SIGXFSZ (%s)",
	flags == O_RDWR ? "O_RDWR" : "O_WRONLY", r < 0 ? "killed" : "");
  t_ok (t_same (fd, 0, MiB, 3) && t_same (fd, 6 * MiB, 2 * MiB, 4)
	&& t_size (fd) == 8 * MiB, "fsize inside: data and size kept");
  close (xfsz_fd);
  close (fd);
  unlink (path);
}

/* own, pipe */

static int own_expect;		/* what own's calls return, if not 0 */

static void
own (const char *how, int flags, int64_t off, int64_t len)
{
  char path[4096];
  int fd = t_create (dir, "own", path, sizeof path);

  t_put (fd, 0, 64 << 10, 5);
  t_put (fd, 1 * MiB, 64 << 10, 6);
  int cfd = open (path, flags);
  if (cfd < 0)
    {
      t_unsupported ("own %s: %s", how, strerror (errno));
      close (fd);
      unlink (path);
      return;
    }
  int e = posix_fallocate64 (cfd, off, len);
  int64_t end = off + len > (1 * MiB + (64 << 10)) ? off + len
		: 1 * MiB + (64 << 10);
  if (own_expect)
    t_ok (e == own_expect, "own %s: %d (posix_fallocate %d)", how,
	  own_expect, e);
  else
    t_ok (e == 0 && t_nohole (fd, off, len) && t_size (fd) == end,
	  "own %s: allocated (posix_fallocate %d)", how, e);
  t_ok (t_same (fd, 0, 64 << 10, 5) && t_same (fd, 1 * MiB, 64 << 10, 6),
	"own %s: data kept", how);
  close (cfd);
  close (fd);
  unlink (path);
}

/* A file whose mode no longer lets its owner open it for writing, with
   a hole, through an O_WRONLY descriptor opened before: the library's
   own descriptor must then be a copy of the caller's.  As nobody, in a
   child (root opens anything).  */
static int
mode_child (void)
{
  char path[4096];

  snprintf (path, sizeof path, "%s/nobody/mode", dir);
  if (setgid (65534) < 0 || setuid (65534) < 0)
    return 3;
  int fd = open (path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  struct stat st;
  if (fd < 0)
    return 4;
  t_put (fd, 0, 64 << 10, 9);
  t_put (fd, MiB, 64 << 10, 10);
  int w = open (path, O_WRONLY), d = open (path, O_RDWR | O_DIRECT);
  int a = open (path, O_WRONLY | O_APPEND);
  /* ntfs-3g, mounted without the permissions option, keeps 0777.  */
  if (fchmod (fd, 0400) < 0 || fstat (fd, &st) < 0
      || (st.st_mode & 0777) != 0400)
    {
      unlink (path);
      return 4;
    }
  /* A copy of an O_APPEND descriptor writes only at the end, and cannot
     read to look for holes: EBADF, as documented (first: the O_WRONLY
     call below fills the hole).  */
  int64_t size0 = t_size (fd);
  int ea = posix_fallocate64 (a, 0, 2 * MiB);
  t_ok (ea == EBADF && t_size (fd) == size0 && t_same (fd, 0, 64 << 10, 9)
	&& t_same (fd, MiB, 64 << 10, 10), "mode 0400, O_WRONLY|O_APPEND "
	"over a hole inside: EBADF, file kept (posix_fallocate %d)", ea);
  close (a);
  int e = posix_fallocate64 (w, 0, 2 * MiB);
  /* A copy of an O_DIRECT descriptor could write only aligned blocks:
     EBADF, as documented.  */
  if (d >= 0)
    {
      int64_t before = t_size (fd);
      int ed = posix_fallocate64 (d, 0, 3 * MiB + 5);
      t_ok (ed == EBADF && t_size (fd) == before, "mode 0400, O_DIRECT "
	    "past the end: EBADF, size kept (posix_fallocate %d)", ed);
      e |= ed != EBADF;
    }
  fchmod (fd, 0600);
  /* The copy needs pidfd_open and pidfd_getfd (Linux 5.6; valgrind 3.19
     does not know them): without them, EBADF, as documented.  */
  long pidfd = syscall (SYS_pidfd_open, getpid (), 0);
  if (pidfd < 0 && errno == ENOSYS)
    {
      t_ok (e == EBADF && t_same (fd, 0, 64 << 10, 9)
	    && t_same (fd, MiB, 64 << 10, 10), "mode 0400, no pidfd_open: "
	    "EBADF, data kept (posix_fallocate %d)", e);
      e = e == EBADF ? 0 : e;
    }
  else
    t_ok (e == 0 && t_nohole (fd, 0, 2 * MiB) && t_same (fd, 0, 64 << 10, 9)
	  && t_same (fd, MiB, 64 << 10, 10), "mode 0400: a hole through an "
	  "O_WRONLY descriptor allocated, data kept (posix_fallocate %d)", e);
  if (pidfd >= 0)
    close ((int) pidfd);
  unlink (path);
  return e == 0 ? 0 : 1;
}

static void
mode (void)
{
  char sub[4096];

  struct statfs fs;

  if (geteuid () != 0)
    {
      t_unsupported ("mode 0400: needs root to become nobody");
      return;
    }
  /* FUSE: holes cannot be found, and a copy of an O_WRONLY descriptor
     cannot read to look: EBADF, as documented.  */
  if (statfs (dir, &fs) == 0 && fs.f_type == 0x65735546)
    {
      t_unsupported ("mode 0400: FUSE, where an O_WRONLY copy cannot look "
		     "for holes");
      return;
    }
  snprintf (sub, sizeof sub, "%s/nobody", dir);
  mkdir (sub, 0777);
  chmod (sub, 0777);
  fflush (stdout);
  int r = in_child (mode_child, 60);
  if (r == 3)
    t_unsupported ("mode 0400: cannot become nobody");
  else if (r == 4)
    t_unsupported ("mode 0400: nobody cannot make a file of mode 0400 "
		   "here");
  else
    t_ok (r == 0, "mode 0400: the child's checks passed");
  rmdir (sub);
}

/* A record lock on the device of a fuseblk filesystem (exfat-fuse):
   the library's look at the device must not drop it.  Whether it is
   held is asked from a child (F_GETLK).  */
static int
lock_held (int dev)
{
  pid_t pid = fork ();
  int st;

  if (pid == 0)
    {
      struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			 .l_len = 1 };
      _exit (fcntl (dev, F_GETLK, &l) == 0 && l.l_type != F_UNLCK ? 0 : 1);
    }
  waitpid (pid, &st, 0);
  return WIFEXITED (st) && WEXITSTATUS (st) == 0;
}

static void
devlock (void)
{
  char line[4096], src[4096] = "", path[4096];
  struct stat64 st;
  FILE *m = fopen ("/proc/self/mountinfo", "re");

  stat64 (dir, &st);
  snprintf (path, sizeof path, " %u:%u ", major (st.st_dev),
	    minor (st.st_dev));
  while (m && fgets (line, sizeof line, m))
    {
      char *p = strstr (line, path), *q = strstr (line, " - fuseblk ");
      if (p && q && p < q)
	sscanf (q + 11, "%4095s", src);
    }
  if (m)
    fclose (m);
  int dev = *src ? open (src, O_RDONLY) : -1;
  struct flock l = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_len = 1 };
  if (dev < 0 || fcntl (dev, F_SETLK, &l) < 0)
    {
      t_unsupported ("devlock: not a fuseblk filesystem with a device to "
		     "lock");
      if (dev >= 0)
	close (dev);
      return;
    }
  int fd = t_create (dir, "devlock", path, sizeof path);
  t_put (fd, 0, 64 << 10, 11);
  int before = lock_held (dev), e = posix_fallocate64 (fd, 0, 64 << 10);
  t_ok (before && e == 0 && lock_held (dev), "devlock: a record lock on "
	"the filesystem's device kept (posix_fallocate %d)", e);
  close (fd);
  unlink (path);
  close (dev);
}

/* An append-only file through O_RDWR|O_APPEND past RLIMIT_FSIZE: EFBIG
   before any write, as from the kernel (an append-only file cannot be
   cut back).  */
static int append_fd;

static int
append_fsize_child (void)
{
  struct rlimit r = { 64 << 10, RLIM_INFINITY };

  signal (SIGXFSZ, SIG_IGN);
  setrlimit (RLIMIT_FSIZE, &r);
  return posix_fallocate64 (append_fd, 0, MiB);
}

static void
append_fsize (void)
{
  char path[4096];
  int fd = t_create (dir, "appendfsize", path, sizeof path), a;

  if (ioctl (fd, FS_IOC_GETFLAGS, &a) < 0
      || (a |= FS_APPEND_FL, ioctl (fd, FS_IOC_SETFLAGS, &a) < 0))
    t_unsupported ("append fsize: append-only file: %s", strerror (errno));
  else
    {
      append_fd = open (path, O_RDWR | O_APPEND);
      int r = in_child (append_fsize_child, 60);
      t_ok (r == EFBIG && t_size (fd) == 0, "append fsize: an append-only "
	    "file past RLIMIT_FSIZE: EFBIG, size 0 (got %d, size %lld)", r,
	    (long long) t_size (fd));
      close (append_fd);
      a &= ~FS_APPEND_FL;
      ioctl (fd, FS_IOC_SETFLAGS, &a);
    }
  close (fd);
  unlink (path);
}

/* lease: a write lease on the file, a hole inside through an O_WRONLY
   descriptor (a descriptor of the library's own would break the
   lease): EBADF at once, the lease kept.  */
static void
lease (void)
{
  char path[4096];
  int fd = t_create (dir, "lease", path, sizeof path);

  t_put (fd, 0, 4096, 12);
  ftruncate (fd, MiB);
  close (fd);
  int w = open (path, O_WRONLY);
  if (w < 0 || fcntl (w, F_SETLEASE, F_WRLCK) < 0)
    t_unsupported ("lease: a write lease here: %s", strerror (errno));
  else
    {
      time_t t0 = time (NULL);
      int e = posix_fallocate64 (w, 0, MiB);
      t_ok (e == EBADF && fcntl (w, F_GETLEASE) == F_WRLCK
	    && time (NULL) - t0 < 10, "lease: EBADF at once, the lease kept "
	    "(posix_fallocate %d, %ld s)", e, (long) (time (NULL) - t0));
      fcntl (w, F_SETLEASE, F_UNLCK);
    }
  /* The lease taken by a child through the inherited descriptor, the
     same open file: /proc/locks names the child, not us.  */
  int p[2];
  char c = 'n';
  pid_t pid = w >= 0 && pipe (p) == 0 ? fork () : -1;
  if (pid == 0)
    {
      c = fcntl (w, F_SETLEASE, F_WRLCK) == 0 ? 'y' : 'n';
      write (p[1], &c, 1);
      pause ();
      _exit (0);
    }
  if (pid > 0 && read (p[0], &c, 1) == 1 && c == 'y')
    {
      time_t t0 = time (NULL);
      int e = posix_fallocate64 (w, 0, MiB);
      t_ok (e == EBADF && fcntl (w, F_GETLEASE) == F_WRLCK
	    && time (NULL) - t0 < 10, "lease: a child's on the same open "
	    "file: EBADF at once, the lease kept (posix_fallocate %d, %ld s)",
	    e, (long) (time (NULL) - t0));
    }
  else
    t_unsupported ("lease: a child's write lease here");
  if (pid > 0)
    {
      kill (pid, SIGKILL);
      waitpid (pid, NULL, 0);
      close (p[0]);
      close (p[1]);
    }
  if (w >= 0)
    close (w);
  unlink (path);
}

/* allocated: a range already allocated (data blocks ending in a zero
   byte) while a thread rewrites its blocks: nothing may be written
   into them, so nothing of the writer's is lost.  */
#define ABLK 4096
#define ANBLK 2048
static int alloc_fd;
static atomic_int alloc_done;

static void *
rewriter (void *arg)
{
  static char b[ABLK];
  unsigned r = 1;

  (void) arg;
  memset (b, 'Z', sizeof b);
  while (!atomic_load (&alloc_done))
    {
      r = r * 1103515245 + 12345;
      syscall (SYS_pwrite64, alloc_fd, b, sizeof b,
	       (off_t) ((r >> 8) % ANBLK) * ABLK);
    }
  return NULL;
}

static void
allocated (void)
{
  char path[4096];
  static char b[ABLK];
  pthread_t t;
  int lost = 0, e = 0;
  struct statfs fs;

  /* FUSE: nothing finds holes there, every block is a candidate, with
     the writing way's documented one-byte window.  */
  if (statfs (dir, &fs) == 0 && fs.f_type == 0x65735546)
    {
      t_unsupported ("allocated: FUSE, where holes cannot be found");
      return;
    }
  alloc_fd = t_create (dir, "allocated", path, sizeof path);
  memset (b, 'A', sizeof b);
  b[ABLK - 1] = 0;
  for (int i = 0; i < ANBLK; i++)
    pwrite64 (alloc_fd, b, sizeof b, (off_t) i * ABLK);
  atomic_store (&alloc_done, 0);
  pthread_create (&t, NULL, rewriter, NULL);
  for (int i = 0; i < 20 && !e; i++)
    e = posix_fallocate64 (alloc_fd, 0, (int64_t) ANBLK * ABLK);
  atomic_store (&alloc_done, 1);
  pthread_join (t, NULL);
  for (int i = 0; i < ANBLK; i++)
    {
      char c;
      pread64 (alloc_fd, &c, 1, (off_t) i * ABLK);
      if (c == 'Z')
	{
	  pread64 (alloc_fd, &c, 1, (off_t) i * ABLK + ABLK - 1);
	  lost += c != 'Z';
	}
    }
  t_ok (e == 0 && lost == 0, "allocated: a range of data rewritten during "
	"20 calls: nothing written into it (posix_fallocate %d, %d blocks "
	"lost)", e, lost);
  close (alloc_fd);
  unlink (path);
}

/* two processes */

static atomic_int *step;		/* shared: each process's writes */
static __thread int in_step = -1;	/* this process's or thread's index,
					   or -1 */
static int step_ms = 200;

/* Before each write of a call, wait (STEP_MS at most) until the other
   process or thread has made as many: their fstat and write come in
   step, unless one waits for the other's whole call.  */
static void
lockstep (void)
{
  if (in_step < 0)
    return;
  int mine = atomic_fetch_add (&step[in_step], 1) + 1;
  for (int i = 0; i < step_ms && atomic_load (&step[!in_step]) < mine; i++)
    usleep (1000);
}

static int pipe_r, pipe_w;
static atomic_int pipe_state;		/* 1 asked, 2 EOF seen, 3 not */
static atomic_int hooked;

/* crossed and clone: the library's first write or fault in a thread
   that sets inside_call stops there, inside its call, holding its
   file's lock stripe: crossed raises SIGUSR2 once both threads are
   inside; clone waits until released.  */
static __thread int inside_call = -1;	/* which thread, -1 none */
static atomic_int inside, released;
static int crossed_fd[2];
static __thread int crossed_me;
static atomic_int crossed_ret[2], crossed_done[2];

static void
crossed_handler (int sig)
{
  (void) sig;
  atomic_store (&crossed_ret[crossed_me],
		posix_fallocate64 (crossed_fd[!crossed_me], 0, 4096));
}

static void
inside_hook (void)
{
  int me = inside_call;

  if (me < 0)
    return;
  inside_call = -1;
  atomic_fetch_add (&inside, 1);
  if (me == 2)
    {
      for (int i = 0; i < 1000 && !atomic_load (&released); i++)
	usleep (10000);
      return;
    }
  for (int i = 0; i < 500 && atomic_load (&inside) < 2; i++)
    usleep (10000);
  raise (SIGUSR2);
}

/* Called from the library's writes and faults: in a thread of its own,
   once, the pipe is closed by another thread and its reader asked.  */
static void
hook (void)
{
  inside_hook ();
  if (!atomic_load (&hooked) || tid () == main_tid
      || atomic_exchange (&hooked, 0) == 0)
    return;
  atomic_store (&pipe_state, 1);
  for (int i = 0; i < 500 && atomic_load (&pipe_state) == 1; i++)
    usleep (10000);
}

/* A file of 2 MiB, a hole, whose inode is (SAME) or is not (!SAME) in
   the lock stripe of inode INO (16 stripes, by inode number); -1 if none
   in 64 tries.  */
static int
stripe_file (const char *name, ino64_t ino, int same)
{
  char path[4096];
  struct stat64 st;
  int tried[64], n = 0, fd = -1;

  /* The files passed over stay open until the end: a file made after
     one deleted could get its inode number again.  */
  while (fd < 0 && n < 64)
    {
      fd = t_create (dir, name, path, sizeof path);
      unlink (path);
      if (fstat64 (fd, &st) < 0 || ftruncate64 (fd, 2 * MiB) < 0
	  || (ino != 0 && (st.st_ino % 16 == ino % 16) != same))
	{
	  tried[n++] = fd;
	  fd = -1;
	}
    }
  while (n > 0)
    close (tried[--n]);
  return fd;
}

static void *
crossed_thread (void *arg)
{
  int me = (int) (intptr_t) arg;

  crossed_me = me;
  inside_call = me;
  atomic_store (&crossed_ret[me], 100 + posix_fallocate64 (crossed_fd[me],
							   0, 2 * MiB));
  atomic_store (&crossed_done[me], 1);
  return NULL;
}

static void
crossed (void)
{
  struct stat64 st;
  struct sigaction sa = { .sa_handler = crossed_handler };
  pthread_t t[2];

  crossed_fd[0] = stripe_file ("crossed-x", 0, 0);
  fstat64 (crossed_fd[0], &st);
  crossed_fd[1] = stripe_file ("crossed-z", st.st_ino, 0);
  if (crossed_fd[1] < 0)
    {
      t_unsupported ("crossed: no file in another lock stripe");
      close (crossed_fd[0]);
      return;
    }
  sigaction (SIGUSR2, &sa, NULL);
  atomic_store (&inside, 0);
  for (int k = 0; k < 2; k++)
    pthread_create (&t[k], NULL, crossed_thread, (void *) (intptr_t) k);
  int i;
  for (i = 0; i < 1000 && !(atomic_load (&crossed_done[0])
			    && atomic_load (&crossed_done[1])); i++)
    usleep (10000);
  if (i == 1000)
    {
      t_ok (0, "crossed: handlers calling on each other's file: both "
	    "returned within 10 s");
      exit (t_done ());
    }
  for (int k = 0; k < 2; k++)
    pthread_join (t[k], NULL);
  t_ok (atomic_load (&inside) == 2 && atomic_load (&crossed_ret[0]) == 100
	&& atomic_load (&crossed_ret[1]) == 100
	&& t_nohole (crossed_fd[0], 0, 2 * MiB)
	&& t_nohole (crossed_fd[1], 0, 2 * MiB),
	"crossed: handlers calling on each other's file: both returned, "
	"both files allocated (%d inside)", atomic_load (&inside));
  signal (SIGUSR2, SIG_DFL);
  close (crossed_fd[0]);
  close (crossed_fd[1]);
}

static int clone_fd;

static int
clone_child (void *arg)
{
  (void) arg;
  _exit (posix_fallocate64 (clone_fd, 0, 4096));
}

static void *
clone_holder (void *arg)
{
  inside_call = 2;
  posix_fallocate64 (*(int *) arg, 0, 2 * MiB);
  return NULL;
}

static void
clone_case (void)
{
  struct stat64 st;
  pthread_t t;
  int fd = stripe_file ("clone-held", 0, 0), status = 0;

  fstat64 (fd, &st);
  clone_fd = stripe_file ("clone-child", st.st_ino, 1);
  if (clone_fd < 0)
    {
      t_unsupported ("clone: no second file in the same lock stripe");
      close (fd);
      return;
    }
  atomic_store (&inside, 0);
  atomic_store (&released, 0);
  pthread_create (&t, NULL, clone_holder, &fd);
  for (int i = 0; i < 500 && atomic_load (&inside) == 0; i++)
    usleep (10000);
  static char stack[64 << 10] __attribute__ ((aligned (16)));
  pid_t pid = atomic_load (&inside)
	      ? clone (clone_child, stack + sizeof stack, SIGCHLD, NULL) : -1;
  pid_t r = 0;
  for (int i = 0; pid > 0 && i < 500
       && (r = waitpid (pid, &status, WNOHANG)) == 0; i++)
    usleep (10000);
  if (pid > 0 && r == 0)
    {
      kill (pid, SIGKILL);
      waitpid (pid, NULL, 0);
    }
  atomic_store (&released, 1);
  pthread_join (t, NULL);
  if (pid < 0)
    t_unsupported ("clone: the holder never got inside its call, or clone "
		   "failed");
  else
    t_ok (r == pid && WIFEXITED (status) && WEXITSTATUS (status) == 0,
	  "clone: a child made by clone() while another thread held the "
	  "stripe: its call returned 0 (%s, status %d)",
	  r == pid ? "exited" : "hung 5 s, killed", WEXITSTATUS (status));
  close (fd);
  close (clone_fd);
}

/* small stack: ALT bytes, as fallocate-shim(1) and libfallocate(3)
   promise: 8 KiB (SIGSTKSZ) is not enough, x86_64's signal frame alone
   takes 3.5 KiB with AVX-512.  ASan's frames are larger: 64 KiB.  */
#ifdef __SANITIZE_ADDRESS__
# define ALT (64 << 10)
#else
# define ALT (10 << 10)
#endif
static volatile sig_atomic_t alt_ret;
static int alt_fd;
static int64_t alt_off, alt_len;

static void
alt_handler (int sig)
{
  (void) sig;
  alt_ret = posix_fallocate64 (alt_fd, alt_off, alt_len);
}

/* t-promise --small-stack FD OFF LEN: posix_fallocate64 (FD, OFF, LEN)
   from a handler on the small stack, the first call of the process (the
   first use of each symbol binds it, lazily, on that stack); exits with
   its result.  */
static int
small_stack_child (char **argv)
{
  /* Below it a page no one may touch: an overflow faults.  */
  char *guard = mmap (NULL, 4096 + ALT, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (guard == MAP_FAILED || mprotect (guard, 4096, PROT_NONE) < 0)
    return 100;
  stack_t ss = { .ss_sp = guard + 4096, .ss_size = ALT };
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = alt_handler;
  sa.sa_flags = SA_ONSTACK;
  if (sigaltstack (&ss, NULL) < 0 || sigaction (SIGUSR1, &sa, NULL) < 0)
    return 100;
  alt_fd = atoi (argv[2]);
  alt_off = atoll (argv[3]);
  alt_len = atoll (argv[4]);
  alt_ret = -1;
  raise (SIGUSR1);
  return alt_ret;
}

/* small_stack_child in a new process (this program again): its wait
   status.  */
static int
on_small_stack (int fd, int64_t off, int64_t len)
{
  char a[3][32];
  int st = 0;
  pid_t pid = fork ();

  if (pid == 0)
    {
      snprintf (a[0], sizeof a[0], "%d", fd);
      snprintf (a[1], sizeof a[1], "%lld", (long long) off);
      snprintf (a[2], sizeof a[2], "%lld", (long long) len);
      execl ("/proc/self/exe", "t-promise", "--small-stack", a[0], a[1],
	     a[2], (char *) NULL);
      _exit (101);
    }
  waitpid (pid, &st, 0);
  return st;
}

static int cancel_fd[2];
static volatile int cancel_ret[2];

static void
cancel_calls (void)
{
  cancel_ret[0] = posix_fallocate64 (cancel_fd[0], INT64_MAX, 1);
  cancel_ret[1] = posix_fallocate64 (cancel_fd[1], 0, 2 * MiB);
}

static void
cancel (void)
{
  char path[4096];

  cancel_fd[0] = t_create (dir, "cancel", path, sizeof path);
  ftruncate (cancel_fd[0], 2 * MiB);
  cancel_fd[1] = open (path, O_WRONLY);
  int reached = t_cancel_pending (cancel_calls);
  t_ok (reached && cancel_ret[0] == EFBIG
	&& cancel_ret[1] == own_expect
	&& (own_expect || t_nohole (cancel_fd[0], 0, 2 * MiB)),
	"cancel: pending cancellation: no call of ours acts on it (%s; "
	"posix_fallocate %d and %d)",
	reached ? "both returned" : "cancelled inside",
	cancel_ret[0], cancel_ret[1]);
  close (cancel_fd[0]);
  close (cancel_fd[1]);
  unlink (path);
}

static void
nofile0 (void)
{
  char path[4096];
  int fd = t_create (dir, "nofile0", path, sizeof path);
  int a = open (path, O_RDWR | O_APPEND);
  struct rlimit old, zero;

  getrlimit (RLIMIT_NOFILE, &old);
  zero = old;
  zero.rlim_cur = 0;
  setrlimit (RLIMIT_NOFILE, &zero);
  int e = posix_fallocate64 (a, 0, MiB);
  setrlimit (RLIMIT_NOFILE, &old);
  t_ok (e == (own_expect ? own_expect : EBADF) && t_size (fd) == 0,
	"nofile 0: RLIMIT_NOFILE 0, through O_RDWR|O_APPEND past the end: "
	"EBADF, size kept (posix_fallocate %d)", e);
  close (a);
  close (fd);
  unlink (path);
}

static void
small_stack (void)
{
  char path[4096];

  if (t_valgrind ())
    {
      t_unsupported ("small stack: under valgrind this case exited 99 (a "
		     "valgrind report) on tmpfs in CI, not yet understood");
      return;
    }
  int fd = t_create (dir, "altstack", path, sizeof path);
  int st = on_small_stack (fd, 0, 1000000000000LL);
  t_ok (WIFEXITED (st) && (WEXITSTATUS (st) == ENOSPC
			   || WEXITSTATUS (st) == EFBIG),
	"small stack: from a handler on a %d KiB alternate stack, 1e12 "
	"bytes: ENOSPC or EFBIG, no crash (status 0x%x)", ALT >> 10, st);
  ftruncate (fd, 2 * MiB);
  int w = open (path, O_WRONLY);
  st = on_small_stack (w, 0, 2 * MiB);
  t_ok (WIFEXITED (st) && WEXITSTATUS (st) == own_expect
	&& (own_expect || t_nohole (fd, 0, 2 * MiB)),
	"small stack: from a handler on a %d KiB alternate stack, O_WRONLY "
	"over a hole inside: %d, no crash (status 0x%x)", ALT >> 10,
	own_expect, st);
  close (w);
  close (fd);
  unlink (path);
}

/* extend then fail: at the library's second write of data, another
   writer (this program, through OTHER_FD) extends the file by a byte
   1 MiB past its end, then the write fails with EIO.  */
static int fail_writes = -1, other_fd;
static int64_t other_at;

static int
extend_then_fail (size_t n)
{
  struct stat64 st;

  if (fail_writes < 0 || n == 0 || ++fail_writes < 2)
    return 0;
  fail_writes = -1;
  fstat64 (other_fd, &st);
  other_at = st.st_size + MiB;
  syscall (SYS_pwrite64, other_fd, "X", 1, other_at);
  errno = EIO;
  return 1;
}

ssize_t
pwrite64 (int fd, const void *buf, size_t n, off64_t off)
{
  hook ();
  if (n > 0)
    lockstep ();
  if (extend_then_fail (n))
    return -1;
  return (ssize_t) syscall (SYS_pwrite64, fd, buf, n, off);
}

ssize_t
pwrite (int fd, const void *buf, size_t n, off_t off)
{
  return pwrite64 (fd, buf, n, off);
}

/* writeback: a filesystem whose page_mkwrite reserves nothing (the
   ext2 driver; the host's ext2 is the ext4 driver, which allocates at
   fault time) modelled here: MADV_POPULATE_WRITE does nothing, and
   msync (MS_SYNC) allocates exactly the pages it writes back.  */
static int writeback_model;
static int writeback_fails;	/* the msync, counting down, that fails */

static int truncate_fd = -1;	/* truncated after the next populate */

int
madvise (void *p, size_t n, int advice)
{
  hook ();
  if (writeback_model && advice == MADV_POPULATE_WRITE)
    return 0;
  int r = (int) syscall (SYS_madvise, p, n, advice);
  if (truncate_fd >= 0 && advice == MADV_POPULATE_WRITE)
    {
      ftruncate (truncate_fd, 0);
      truncate_fd = -1;
    }
  return r;
}

static void
truncated (void)
{
  char path[4096];
  struct fiemap m = { .fm_length = 1 };
  int fd = t_create (dir, "truncated", path, sizeof path);

  if (ioctl (fd, FS_IOC_FIEMAP, &m) < 0)
    {
      t_unsupported ("truncated: no FIEMAP here, holes cannot be looked "
		     "for again (a documented window)");
      close (fd);
      unlink (path);
      return;
    }
  truncate_fd = open (path, O_WRONLY);
  int e = posix_fallocate64 (fd, 0, 16 * MiB);
  int populated = truncate_fd < 0;
  if (truncate_fd >= 0)
    close (truncate_fd);
  truncate_fd = -1;
  if (!populated)
    t_unsupported ("truncated: the library populated nothing here");
  else
    t_ok ((e == 0 && t_size (fd) == 16 * MiB && t_nohole (fd, 0, 16 * MiB))
	  || e == EIO, "truncated: to 0 by another writer during the call: "
	  "the range allocated, or EIO (posix_fallocate %d, size %lld)", e,
	  (long long) t_size (fd));
  close (fd);
  unlink (path);
}

int
msync (void *p, size_t n, int flags)
{
  if (writeback_model && (flags & MS_SYNC) && writeback_fails > 0
      && --writeback_fails == 0)
    {
      errno = ENOSPC;
      return -1;
    }
  if (writeback_model && (flags & MS_SYNC)
      && syscall (SYS_madvise, p, n, MADV_POPULATE_WRITE) < 0)
    return -1;
  return (int) syscall (SYS_msync, p, n, flags);
}

/* Several holes in one window, allocated only by writeback: each must be
   written back from its own start.  */
static void
writeback (void)
{
  char path[4096];
  int fd = t_create (dir, "writeback", path, sizeof path);

  for (int i = 0; i < 4; i++)
    t_put (fd, (int64_t) i * MiB, 64 << 10, 20 + i);
  writeback_model = 1;
  int e = posix_fallocate64 (fd, 0, 4 * MiB);
  writeback_model = 0;
  int kept = 1;
  for (int i = 0; i < 4; i++)
    kept &= t_same (fd, (int64_t) i * MiB, 64 << 10, 20 + i);
  t_ok (e == 0 && t_nohole (fd, 0, 4 * MiB) && kept,
	"writeback: holes allocated only at writeback, several in one "
	"window: all allocated, data kept (posix_fallocate %d)", e);
  close (fd);
  unlink (path);

  /* Holes on both sides of the 64 MiB windows' border, data at it; the
     first msync (the first hole's check) succeeds, the second, leaving
     the first window, fails: the second hole stays one, so 0 would be a
     lie.  3 MiB: no up-front ENOSPC on a small filesystem.  */
  fd = t_create (dir, "writeback-fail", path, sizeof path);
  static const int64_t at[] = { 62 * MiB, 63 * MiB, 64 * MiB, 129 * MiB / 2 };
  struct stat64 st;
  if (ftruncate64 (fd, 65 * MiB) < 0 || fstat64 (fd, &st) < 0
      || st.st_blocks > 2048)
    {
      t_unsupported ("writeback failing: no sparse 65 MiB file here");
      close (fd);
      unlink (path);
      return;
    }
  for (int i = 0; i < 4; i++)
    t_put (fd, at[i], 64 << 10, 30 + i);
  writeback_model = 1;
  writeback_fails = 2;
  e = posix_fallocate64 (fd, 62 * MiB, 3 * MiB);
  writeback_model = writeback_fails = 0;
  kept = 1;
  for (int i = 0; i < 4; i++)
    kept &= t_same (fd, at[i], 64 << 10, 30 + i);
  t_ok ((e == ENOSPC || (e == 0 && t_nohole (fd, 62 * MiB, 3 * MiB)))
	&& kept,
	"writeback failing: msync's ENOSPC leaving the first of two "
	"windows: ENOSPC, or 0 with no hole left; data kept "
	"(posix_fallocate %d)", e);
  close (fd);
  unlink (path);
}

static void *
closer (void *arg)
{
  (void) arg;
  while (atomic_load (&pipe_state) == 0)
    usleep (1000);
  if (atomic_load (&pipe_state) != 1)
    return NULL;
  close (pipe_w);
  struct pollfd p = { pipe_r, POLLIN, 0 };
  char c;
  int eof = poll (&p, 1, 2000) == 1 && read (pipe_r, &c, 1) == 0;
  atomic_store (&pipe_state, eof ? 2 : 3);
  return NULL;
}

/* turns: two threads, each posix_fallocate (fd, 0, 16.5 MiB) through
   O_WRONLY|O_APPEND descriptors on one empty append-only file (which
   only appending can grow), their writes in step unless one waits for
   the other: calls of ours take turns, so the second finds the size
   reached and the file is exactly 16.5 MiB.  */
static const char *turns_path;
static atomic_int turns_ready;

static void *
turns_thread (void *arg)
{
  int fd = open (turns_path, O_WRONLY | O_APPEND);

  in_step = (int) (intptr_t) arg;
  atomic_fetch_add (&turns_ready, 1);
  while (atomic_load (&turns_ready) < 2)
    ;
  intptr_t e = posix_fallocate64 (fd, 0, 16 * MiB + MiB / 2);
  in_step = -1;
  close (fd);
  return (void *) e;
}

static void
turns (void)
{
  char path[4096];
  int fd = t_create (dir, "turns", path, sizeof path), a;
  pthread_t t[2];
  void *e[2];

  if (ioctl (fd, FS_IOC_GETFLAGS, &a) < 0
      || (a |= FS_APPEND_FL, ioctl (fd, FS_IOC_SETFLAGS, &a) < 0))
    {
      t_unsupported ("turns: append-only file: %s", strerror (errno));
      close (fd);
      unlink (path);
      return;
    }
  turns_path = path;
  step = mmap (NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	       -1, 0);
  step_ms = 20;
  int bad = 0;
  for (int round = 0; round < 3 && !bad; round++)
    {
      a &= ~FS_APPEND_FL;
      ioctl (fd, FS_IOC_SETFLAGS, &a);
      ftruncate (fd, 0);
      a |= FS_APPEND_FL;
      ioctl (fd, FS_IOC_SETFLAGS, &a);
      step[0] = step[1] = 0;
      atomic_store (&turns_ready, 0);
      for (intptr_t k = 0; k < 2; k++)
	pthread_create (&t[k], NULL, turns_thread, (void *) k);
      for (int k = 0; k < 2; k++)
	pthread_join (t[k], &e[k]);
      bad = e[0] != 0 || e[1] != 0 || t_size (fd) != 16 * MiB + MiB / 2;
    }
  step_ms = 200;
  t_ok (!bad, "turns: two threads appending to an append-only file: size "
	"exactly 16.5 MiB (got %lld)", (long long) t_size (fd));
  a &= ~FS_APPEND_FL;
  ioctl (fd, FS_IOC_SETFLAGS, &a);
  munmap (step, 4096);
  close (fd);
  unlink (path);
}

/* A failure part way, after someone else extended the file: the size
   is no longer ours to set back, and the other writer's byte stays.  */
static void
extended (void)
{
  char path[4096], c = 0;
  int fd = t_create (dir, "extended", path, sizeof path);
  int w = open (path, O_WRONLY);

  other_fd = fd;
  fail_writes = 0;
  int e = posix_fallocate64 (w, 0, 4 * MiB);
  fail_writes = -1;
  if (other_at == 0)
    t_unsupported ("extended: the call made fewer than two writes "
		   "(posix_fallocate %d)", e);
  else
    t_ok (e == EIO && t_size (fd) == other_at + 1
	  && pread64 (fd, &c, 1, other_at) == 1 && c == 'X',
	  "extended: EIO, the other writer's extension kept (posix_fallocate "
	  "%d, size %lld)", e, (long long) t_size (fd));
  close (w);
  close (fd);
  unlink (path);
}

static void
pipe_eof (void)
{
  char path[4096];
  int fds[2];
  pthread_t t;
  int fd = t_create (dir, "pipe", path, sizeof path);

  t_put (fd, 0, 4096, 7);
  t_put (fd, 4 * MiB, 4096, 8);
  int wfd = open (path, O_WRONLY);
  pipe (fds);
  pipe_r = fds[0], pipe_w = fds[1];
  atomic_store (&pipe_state, 0);
  atomic_store (&hooked, 1);
  pthread_create (&t, NULL, closer, NULL);
  int e = posix_fallocate64 (wfd, 0, 4 * MiB);
  int state = atomic_load (&pipe_state);
  if (state == 0)
    atomic_store (&pipe_state, 4);
  atomic_store (&hooked, 0);
  pthread_join (t, NULL);
  if (state == 0)
    t_unsupported ("pipe: the call wrote nothing in a thread of its own "
		   "(posix_fallocate %d)", e);
  else
    t_ok (e == 0 && state == 2, "pipe: closed by another thread during a "
	  "call, EOF at its reader during the call (posix_fallocate %d)", e);
  close (pipe_r);
  if (state == 0)
    close (pipe_w);
  close (wfd);
  close (fd);
  unlink (path);
}

static int
two (void)
{
  char path[4096];
  int bad = 0, fd = t_create (dir, "two", path, sizeof path);
  int64_t len = 16 * MiB + MiB / 2;

  step = mmap (NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	       -1, 0);
  for (int round = 0; round < 3 && !bad; round++)
    {
      ftruncate (fd, 0);
      step[0] = step[1] = 0;
      pid_t pid[2];
      for (int k = 0; k < 2; k++)
	if ((pid[k] = fork ()) == 0)
	  {
	    int afd = open (path, O_WRONLY | O_APPEND);
	    in_step = k;
	    _exit (posix_fallocate64 (afd, 0, len));
	  }
      for (int k = 0; k < 2; k++)
	{
	  int st;
	  waitpid (pid[k], &st, 0);
	  bad |= !WIFEXITED (st) || WEXITSTATUS (st) != 0;
	}
      if (t_size (fd) != len)
	{
	  printf ("# two processes: size %lld\n", (long long) t_size (fd));
	  bad = 1;
	}
    }
  close (fd);
  unlink (path);
  return bad;
}

static void *
nothing (void *arg)
{
  return arg;
}

/* Whether pthread_create works under the filter just installed.  */
static int
can_thread (void)
{
  pthread_t t;

  if (pthread_create (&t, NULL, nothing, NULL) != 0)
    return 0;
  pthread_join (t, NULL);
  return 1;
}

int
main (int argc, char **argv)
{
  if (argc < 3)
    {
      fprintf (stderr, "usage: t-promise DIR ENOSYS|EOPNOTSUPP "
	       "[nounshare|docker]\n");
      return 2;
    }
  if (argc == 5 && strcmp (argv[1], "--small-stack") == 0)
    return small_stack_child (argv);
  dir = argv[1];
  main_tid = tid ();
  keep_make ();
  if (fa_deny_fallocate (strcmp (argv[2], "ENOSYS") == 0 ? ENOSYS
			 : EOPNOTSUPP) < 0
      || (argc > 3 && fa_deny_container (strcmp (argv[3], "docker") == 0
					 ? ENOSYS
					 : strcmp (argv[3], "clone3eperm")
					   == 0 ? EPERM : 0) < 0))
    {
      perror ("t-promise: seccomp");
      return 2;
    }
  /* An older profile, which refuses clone3 (EPERM), so that
     pthread_create fails (but under valgrind, which uses clone): the
     library makes its thread with clone, which the profile allows, and
     the call allocates (EBADF while it used pthread_create).  */
  if (argc > 3 && strcmp (argv[3], "clone3eperm") == 0)
    {
      printf ("# pthread_create %s under the profile\n",
	      can_thread () ? "works" : "fails");
      own_expect = 0;
      own ("O_WRONLY, hole inside, no thread", O_WRONLY, 0,
	   1 * MiB + (64 << 10));
      return t_done ();
    }
  /* First: the process's first fallback call is among the gaps.  */
  handler ();
  keep ();
  xfsz ();
  fsize_inside (O_RDWR);
  fsize_inside (O_WRONLY);
  own ("O_WRONLY, hole inside", O_WRONLY, 0, 1 * MiB + (64 << 10));
  own ("O_WRONLY|O_APPEND, hole inside", O_WRONLY | O_APPEND, 0,
       1 * MiB + (64 << 10));
  own ("O_RDWR|O_DIRECT past the end", O_RDWR | O_DIRECT, 0, 4 * MiB);
  pipe_eof ();
  extended ();
  lease ();
  allocated ();
  devlock ();
  append_fsize ();
  writeback ();
  small_stack ();
  truncated ();
  nofile0 ();
  cancel ();
  crossed ();
  clone_case ();
  turns ();
  mode ();
  t_ok (two () == 0, "two processes appending: size exactly 16.5 MiB");
  return t_done ();
}
