/* t-sigstep DIR: a signal handler's posix_fallocate landing at every
   instruction of another posix_fallocate in the same thread, one run per
   instruction: the process is single-stepped (ptrace) to the N-th
   instruction of the call, and SIGUSR1 delivered there.  The fallback
   runs (fallocate refused with ENOSYS).

   The interrupted call (one byte at the end of a memfd, generic/438's,
   the shortest) is on a memfd, the handler's on a file in DIR
   (another filesystem); then a small call past the end of a memfd sealed
   against writes must get 0 and its size grown, as from the kernel:
   what a thread remembers of the last filesystem it asked (fa-file.c,
   statfs_of) must not mix the two filesystems' facts.  Every run: both
   calls 0, the data of the first unchanged.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fallocate.h>
#include "fa-deny.h"
#include "tcheck.h"

static const char *dir;
static int hfd, hret = -1;
static volatile sig_atomic_t phase, during;

static void
handler (int sig)
{
  int e = errno;

  (void) sig;
  during = phase == 1;
  hret = posix_fallocate64 (hfd, 0, 4096);
  errno = e;
}

static int
memfd (size_t size, unsigned seed)
{
  int fd = memfd_create ("t-sigstep", MFD_ALLOW_SEALING);

  if (fd >= 0 && size)
    t_put (fd, 0, size, seed);
  return fd;
}

/* The traced child: exit 0 if all held and the handler ran inside the
   first call, 2 if it ran after (the run is past the call's end), 3 if
   not at all, 1 if something failed.  */
static void
victim (void)
{
  char path[4096];
  struct sigaction sa;

  ptrace (PTRACE_TRACEME, 0, 0, 0);
  if (fa_deny_fallocate (ENOSYS) < 0)
    _exit (4);
  int a = memfd (8192, 1), s = memfd (4096, 2);
  hfd = t_create (dir, "sigstep", path, sizeof path);
  unlink (path);
  if (a < 0 || s < 0 || hfd < 0 || fcntl (s, F_ADD_SEALS, F_SEAL_WRITE) < 0)
    _exit (4);
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigaction (SIGUSR1, &sa, NULL);
  phase = 1;
  raise (SIGSTOP);
  int r1 = posix_fallocate64 (a, 8192, 1);
  phase = 2;
  int r2 = posix_fallocate64 (s, 4096, 4096);
  if (hret < 0)
    _exit (3);
  int ok = r1 == 0 && hret == 0 && r2 == 0 && t_size (s) == 8192
	   && t_size (a) == 8193 && t_same (a, 0, 8192, 1);
  if (!ok)
    printf ("# call %d, handler's %d, sealed memfd %d, size %lld\n", r1,
	    hret, r2, (long long) t_size (s));
  fflush (stdout);
  _exit (!ok ? 1 : during ? 0 : 2);
}

/* One run, the signal at instruction N of the call: the victim's exit
   status, or -1.  */
static int
run (long n)
{
  int st;
  pid_t pid = fork ();

  if (pid < 0)
    return -1;
  if (pid == 0)
    victim ();
  if (waitpid (pid, &st, 0) != pid || !WIFSTOPPED (st))
    return -1;
  for (long i = 0; i < n; i++)
    if (ptrace (PTRACE_SINGLESTEP, pid, 0, 0) < 0
	|| waitpid (pid, &st, 0) != pid || !WIFSTOPPED (st))
      break;
  int sig = SIGUSR1;
  while (ptrace (PTRACE_CONT, pid, 0, sig) == 0
	 && waitpid (pid, &st, 0) == pid && WIFSTOPPED (st))
    sig = WSTOPSIG (st) == SIGTRAP ? 0 : WSTOPSIG (st);
  waitpid (pid, &st, 0);
  return WIFEXITED (st) ? WEXITSTATUS (st) : -1;
}

int
main (int argc, char **argv)
{
  dir = argc > 1 ? argv[1] : ".";
#if defined __SANITIZE_ADDRESS__
  t_unsupported ("t-sigstep: under ASan a call is many times the "
		 "instructions, and the runs grow as their square");
  return t_done ();
#endif
  if (t_valgrind ())
    {
      t_unsupported ("t-sigstep: under valgrind the steps are valgrind's");
      return t_done ();
    }
  long n, landed = 0, bad = 0, first = -1;
  int st = 0;
  for (n = 1; n < 100000; n++)
    {
      st = run (n);
      if (st == 0)
	landed++;
      else if (st == 1 || st < 0 || st == 4)
	{
	  bad++;
	  if (first < 0)
	    first = n;
	  if (st != 1)
	    break;
	}
      else if (st == 2)
	break;
    }
  printf ("# %ld runs, the handler inside the call in %ld\n", n, landed);
  if (st == 4 || st < 0)
    t_unsupported ("t-sigstep: the traced child could not set up (%d)", st);
  else
    t_ok (bad == 0 && landed > 100, "a handler's call at each of %ld "
	  "instructions of a call: every result right (%ld wrong, the "
	  "first at %ld)", landed, bad, first);
  return t_done ();
}
