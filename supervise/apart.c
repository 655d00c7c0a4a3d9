/* A call answered by writing, in a process of its own (sv_apart).

   A fill faults the file's pages in through a mapping, and a fault that
   blocks (a frozen filesystem, a stopped FUSE server) holds its
   process's memory-map lock: the next mmap of any thread of the
   process waits behind it, and every page fault after that, which in
   the supervisor was every call.  So a call that the kernel refuses and
   that the policy answers by writing (the fallback of a mode-0 call,
   the emulation) is answered in a child made with clone: its memory is
   its own, and a fill stuck there holds up that call alone.  The child
   shares our descriptor table (CLONE_FILES): it closes nothing when it
   ends, so no FUSE server sees a FLUSH of ours, and it uses the copy of
   the caller's descriptor that we took.  Its exit signal is none, so
   that only a wait for clone children reaps it, never sv_wait's for
   COMMAND.  The file's turn is taken here, around the child: two
   children never fill one file at once.  Where no child can be had (a
   pids cgroup, RLIMIT_NPROC, no memory), the call is answered in this
   thread.  */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
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

static int
child (void *arg)
{
  struct job *j = arg;

  j->err = __fa_answer (&__fa_policy, j->fd, j->mode, j->off, j->len,
			&j->how);
  return 0;
}

int
sv_apart (int fd, int mode, int64_t off, int64_t len, const char **how)
{
  struct fa_file f;
  struct job *j;
  int err = (int) -__fa_syscall (fd, mode, off, len), st;

  *how = "";
  if ((err != EOPNOTSUPP && err != ENOSYS)
      || (mode != 0 && __fa_policy.action != FA_EMULATE))
    return err;
  memset (&f, 0, sizeof f);
  if (fstat64 (fd, &f.st) < 0)
    return errno;
  j = mmap (NULL, AREA, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	    -1, 0);
  if (j == MAP_FAILED)
    return __fa_answer (&__fa_policy, fd, mode, off, len, how);
  *j = (struct job) { fd, mode, off, len, EIO, "" };
  __fa_lock (&f);
  pid_t pid = clone (child, (char *) j + AREA, CLONE_FILES, j);
  if (pid < 0)
    child (j);
  else
    while (waitpid (pid, &st, __WCLONE) < 0 && errno == EINTR)
      ;
  __fa_unlock (&f);
  /* A child killed (the OOM killer) answered nothing: EIO.  */
  err = j->err;
  *how = j->how;
  munmap (j, AREA);
  return err;
}
