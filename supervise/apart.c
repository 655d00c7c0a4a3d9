/* A call answered by writing, in a process of its own (sv_apart).

   A fill faults the file's pages in through a mapping, and a fault that
   blocks (a frozen filesystem, a stopped FUSE server) holds its
   process's memory-map lock: the next mmap of any thread of the
   process waits behind it, and every page fault after that, which in
   the supervisor was every call.  So a call that the kernel refuses and
   that the policy answers by writing (the fallback of a mode-0 call,
   the emulation) is answered in a child made with clone: its memory is
   its own, and a fill stuck there holds up that call alone.  It gets a
   copy of our descriptors and closes all but its call's at once, its
   standard streams made /dev/null: a copy of another call's file would
   keep that file open while the fill is stuck, after its caller closed
   it (its flock held, its blocks after an unlink, its mount busy), of a
   pipe its end of file, and of the listener every call: the kernel
   answers ENOSYS once no process holds it.  A child stuck in a fill
   when we die finishes it alone (a FUSE server sees a FLUSH for each
   descriptor it closes).  Its exit signal
   is none, so that only a wait for clone children reaps it, never
   sv_wait's for COMMAND.  It writes as the caller would: it inherits
   the identity our thread took on for the call (who.c).

   The file's turn is taken here, around the child: two children never
   fill one file at once.  A child killed part way (the OOM killer) gets
   the caller EIO and leaves what it wrote, the file's new size among
   it: whether another process grew the file meanwhile cannot be told
   from here, and a truncation would take its data too.  Where no child
   can be had (a pids cgroup, RLIMIT_NPROC, no memory), the call is
   answered in this thread, and a fill stuck there holds up the others
   again.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fa-file.h"
#include "fa-policy.h"
#include "supervise.h"

/* The child's stack, and the call and its answer below it, in memory
   the child shares with us.  */
#define AREA (256 << 10)

struct job
{
  int fd, mode;
  int64_t off, len;
  int err;
  const char *how;		/* a string of ours: at the same address in
				   the child, a copy of us */
};

/* Every descriptor closed but FD, which is returned (moved above 2),
   0 to 2 made /dev/null.  */
static int
only (int fd)
{
  int null = open ("/dev/null", O_RDWR);
  int moved = fd < 3 ? fcntl (fd, F_DUPFD, 3) : fd;
  struct rlimit r;

  if (moved >= 0)
    fd = moved;
  for (int i = 0; i < 3 && null >= 0; i++)
    if (i != null && i != fd)
      dup2 (null, i);
#ifdef SYS_close_range
  if ((fd <= 3 || syscall (SYS_close_range, 3U, (unsigned) fd - 1, 0) == 0)
      && syscall (SYS_close_range, fd < 3 ? 3U : (unsigned) fd + 1, ~0U,
		  0) == 0)
    return fd;
#endif
  if (getrlimit (RLIMIT_NOFILE, &r) < 0 || r.rlim_cur > 1 << 20)
    r.rlim_cur = 1 << 20;
  for (int i = 3; i < (int) r.rlim_cur; i++)
    if (i != fd)
      close (i);
  return fd;
}

static int
child (void *arg)
{
  struct job *j = arg;

  j->fd = only (j->fd);
  j->err = __fa_answer (&__fa_policy, j->fd, j->mode, j->off, j->len,
			&j->how);
  return 0;
}

/* Calls answered in this thread, where no child could be had: our exit
   waits for them (sv_apart_quiet), or their fill would be cut off half
   done; one that would begin once it waits gets ENOSYS instead, as
   after our exit.  One in a child finishes alone, and is not waited
   for.  */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t quiet = PTHREAD_COND_INITIALIZER;
static int here_now, closing;

static int
here (int fd, int mode, int64_t off, int64_t len, const char **how)
{
  int err;

  pthread_mutex_lock (&mu);
  if (closing)
    {
      pthread_mutex_unlock (&mu);
      return ENOSYS;
    }
  here_now++;
  pthread_mutex_unlock (&mu);
  err = __fa_answer (&__fa_policy, fd, mode, off, len, how);
  pthread_mutex_lock (&mu);
  if (--here_now == 0)
    pthread_cond_broadcast (&quiet);
  pthread_mutex_unlock (&mu);
  return err;
}

void
sv_apart_quiet (void)
{
  pthread_mutex_lock (&mu);
  closing = 1;
  while (here_now > 0)
    pthread_cond_wait (&quiet, &mu);
  pthread_mutex_unlock (&mu);
}

int
sv_apart (int fd, int mode, int64_t off, int64_t len, const char **how)
{
  struct fa_file f;
  struct job *j;
  int err = (int) -__fa_syscall (fd, mode, off, len), st = 0;

  *how = "";
  if ((err != EOPNOTSUPP && err != ENOSYS) || !__fa_writes (&__fa_policy, mode))
    return err;
  memset (&f, 0, sizeof f);
  f.fd = fd;
  if (fstat64 (fd, &f.st) < 0)
    return errno;
  j = mmap (NULL, AREA, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	    -1, 0);
  if (j == MAP_FAILED)
    return here (fd, mode, off, len, how);
  j->fd = fd;
  j->mode = mode;
  j->off = off;
  j->len = len;
  j->err = EIO;
  j->how = "";
  __fa_lock (&f);
  pid_t pid = clone (child, (char *) j + AREA, 0, j);
  if (pid < 0)
    j->err = here (fd, mode, off, len, &j->how);
  else
    while (waitpid (pid, &st, __WCLONE) < 0 && errno == EINTR)
      ;
  if (pid > 0 && WIFSIGNALED (st))
    j->err = EIO;
  __fa_unlock (&f);
  err = j->err;
  *how = j->how;
  munmap (j, AREA);
  return err;
}
