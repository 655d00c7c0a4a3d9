/* fallocate-supervise COMMAND [ARGS...]: run COMMAND with its fallocate
   system calls answered by this process, for the programs that
   LD_PRELOAD cannot reach (static, Go, musl, raw system call users).
   fallocate-shim --supervise runs it; the policy and the trace come in
   FALLOCATE_SHIM_POLICY and FALLOCATE_SHIM_TRACE, read by the library's
   own constructor (io/fa-policy.c) into __fa_policy, and are not passed
   on to COMMAND.

   This file: the start.  A child installs the filter and hands the
   listener over (filter.c); once the kernel is known to have what we
   need, signals are passed on (signals.c), the threads start (pool.c),
   each answering calls (answer.c), and the child execs COMMAND.

   This process exits when COMMAND has exited and no process under the
   filter is left (the listener hangs up), with COMMAND's status.  If it
   dies first, the kernel answers every pending and later fallocate call
   of COMMAND with ENOSYS.  */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fa-policy.h"
#include "supervise.h"

int listener;
struct rlimit sv_nofile;

/* What the kernel refused, for a user.  */
static void
cannot (const char *what, int err)
{
  const char *why = strerror (err);

  if (err == ENOSYS || err == EINVAL)
    why = "not in this kernel";
  else if (err == EBUSY)
    why = "another supervisor already listens (one per process)";
  fprintf (stderr, ME ": %s: %s\n", what, why);
}

/* The child, which never ran COMMAND, and the anchor killed and
   reaped; exit.  */
static _Noreturn void
give_up (pid_t pid)
{
  kill (pid, SIGKILL);
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
  sv_unanchor ();
  exit (CANNOT);
}

/* The name of error number E (glibc's strerrorname_np; elsewhere those
   a sandbox answers with), or "?".  */
static const char *
errname (int e)
{
#ifdef __GLIBC__
  const char *n = strerrorname_np (e);

  return n ? n : "?";
#else
  switch (e)
    {
    case ENOSYS: return "ENOSYS";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case ENOSPC: return "ENOSPC";
    case EINVAL: return "EINVAL";
    case EIO: return "EIO";
    default: return "?";
    }
#endif
}

int
main (int argc, char **argv)
{
  int sv[2], err, probe, pidfd, status, own;
  struct sigaction ign, xfsz, pipe;
  sigset_t mask;
  struct itimerval timers[3];
  long r;
  pid_t pid;

  if (argc > 1 && strcmp (argv[1], "--") == 0)
    argc--, argv++;
  if (argc < 2)
    {
      fprintf (stderr, "usage: fallocate-supervise [--] COMMAND [ARGS...]\n");
      return 2;
    }
  /* Without a policy, the wrapper's default: a mode-0 call refused gets
     what posix_fallocate gets.  */
  if (getenv ("FALLOCATE_SHIM_POLICY") == NULL)
    __fa_policy.action = FA_FILL;
  /* COMMAND's mask is the one we had; the signals we pass on are held
     from here until we can (sv_forward): the processes made before
     that (sv_nested's probe, COMMAND's, the anchor) are never left to
     init by a signal that kills us.  */
  sigprocmask (SIG_SETMASK, NULL, &mask);
  sv_hold (&mask);
  /* Under a supervisor of ours (fallocate-shim --supervise sv_nested):
     it answers COMMAND's calls too, with its policy, and a second
     listener cannot be had.  COMMAND runs in our place.  */
  if (sv_nested ())
    {
      unsetenv ("FALLOCATE_SHIM_POLICY");
      unsetenv ("FALLOCATE_SHIM_TRACE");
      sigprocmask (SIG_SETMASK, &mask, NULL);
      execvp (argv[1], argv + 1);
      fprintf (stderr, "fallocate-shim: %s: %s\n", argv[1], strerror (errno));
      return errno == ENOENT ? 127 : CANNOT;
    }
  /* Each call in flight holds a pidfd and a copy of the caller's
     descriptor here: as many descriptors as the hard limit allows, so
     that no call fails for want of one (COMMAND gets the limit it was
     given back, sv_run).  */
  getrlimit (RLIMIT_NOFILE, &sv_nofile);
  {
    struct rlimit raised = { sv_nofile.rlim_max, sv_nofile.rlim_max };

    setrlimit (RLIMIT_NOFILE, &raised);
  }
  /* An outer seccomp filter that answers fallocate with an errno wins
     over our user notification: say so.  Every kernel with fallocate
     answers a bad descriptor with EBADF.  */
  r = __fa_syscall (-1, 0, 0, 1);
  if (r == 0)
    fprintf (stderr, ME ": fallocate succeeds on a bad descriptor before "
	     "reaching any supervisor (an outer seccomp filter?)\n");
  else if (r != -EBADF)
    fprintf (stderr, ME ": fallocate fails with %s (%s) before reaching any "
	     "supervisor (an outer seccomp filter?): COMMAND's calls will "
	     "too\n", errname ((int) -r), strerror ((int) -r));

  /* The fallback's SIGXFSZ (RLIMIT_FSIZE) and a trace written to a
     closed pipe must not kill the supervisor; COMMAND gets the
     dispositions we had.  */
  memset (&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigaction (SIGXFSZ, &ign, &xfsz);
  sigaction (SIGPIPE, &ign, &pipe);

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    {
      perror (ME ": socketpair");
      return CANNOT;
    }
  own = sv_own_group ();
  sv_timers (timers, 0);
  pid = fork ();
  if (pid < 0)
    {
      perror (ME ": fork");
      return CANNOT;
    }
  if (pid == 0)
    {
      close (sv[0]);
      sv_run (sv[1], argv + 1, &mask, &xfsz, &pipe, own, timers);
    }
  close (sv[1]);
  if (own)
    {
      setpgid (pid, pid);	/* as the child does: whichever runs first */
      sv_anchor (pid);
    }
  listener = sv_receive (sv[0], &err);
  if (listener < 0)
    {
      cannot ("seccomp user notification (Linux 5.0 or later)", err);
      give_up (pid);
    }
  /* The caller and the thread that answers it take turns on one CPU
     rather than wake each other across CPUs (Linux 6.6; older kernels
     refuse, and the calls are answered all the same).  */
  ioctl (listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
	 SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
  /* pidfd_getfd (Linux 5.6 or later), tried on the child's socket.
     The child's pidfd tells sv_wait when COMMAND exits.  */
  pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  probe = pidfd < 0 ? -1 : (int) syscall (SYS_pidfd_getfd, pidfd, sv[1], 0);
  err = errno;
  if (probe < 0)
    {
      cannot (err == EPERM ? "pidfd_getfd on COMMAND (ptrace access; in a "
	      "container, CAP_SYS_PTRACE)"
	      : err == EMFILE || err == ENFILE
	      ? "two descriptors for each call (the hard RLIMIT_NOFILE, "
	      "ulimit -Hn)"
	      : "pidfd_open and pidfd_getfd (Linux 5.6 or later)", err);
      give_up (pid);
    }
  close (probe);

  sv_forward (pid, own);
  if ((err = sv_pool_start ()) != 0)
    {
      cannot ("pthread_create", err);
      give_up (pid);
    }
  if (write (sv[0], "", 1) != 1)
    {
      /* A signal passed on to the child before it could start COMMAND
	 (EPIPE) ends us as it ended the child.  */
      if (errno == EPIPE && waitpid (pid, &status, 0) == pid)
	{
	  sv_unanchor ();
	  sv_finish (status);
	}
      perror (ME ": starting COMMAND");
      give_up (pid);
    }
  close (sv[0]);

  /* COMMAND's end, and that of the processes it left behind: until
     none is left under the filter, the listener stays up for them.
     Then a call still being answered is a dead process's: one filling
     in a process of its own is not waited for (stuck in a frozen
     filesystem, it would hold up our exit; it finishes alone), one in
     a thread of ours is (cut off, it would be left half done): sv_end.  */
  sv_end (sv_wait (pid, pidfd));
}
