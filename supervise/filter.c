/* fallocate-supervise's filter and its hand-over to the supervisor.

   The child (sv_run) sets no_new_privs and installs a seccomp filter
   that sends fallocate alone (every number the ABI's kernel has for it:
   fa-seccomp.h in the sysdeps leaf, less those this kernel has not) to
   user notification, hands the listener to the supervisor over a
   socket (sv_receive), waits for its go-ahead and execs COMMAND.  Every
   process and thread of COMMAND inherits the filter.  */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/filter.h>
#include "fa-internal.h"
#include "fa-policy.h"
#include "fa-seccomp.h"
#include "supervise.h"

/* The filter: FA_SECCOMP_CALLS to user notification, all else allowed.
   Its size: four instructions per call, and the returns.  Under pass
   and fill without a trace, only mode 0 is sent: the supervisor would
   pass any other mode on unchanged, and the kernel
   answers it in the caller, as if we were not there (its credentials,
   its RLIMIT_FSIZE), without the round trip.  The mode is the second
   argument for every ABI of the leaf, its low word first (x86_64).  */
static const struct { unsigned arch, nr; } calls[] = { FA_SECCOMP_CALLS };
#define NCALLS (sizeof calls / sizeof calls[0])

/* Whether this kernel has call I of CALLS.  A number of our own ABI is
   tried on a bad descriptor: ENOSYS says no (x32's on a kernel built
   without it, or booted with x32=no).  Then the filter leaves the call
   to the kernel, which answers ENOSYS, rather than have us allocate.  A
   number of another ABI (i386's) cannot be tried from here: kept.  */
static int
has_call (unsigned i)
{
  return calls[i].arch != FA_SECCOMP_ARCH
	 || syscall ((long) calls[i].nr, -1, 0, 0L, 1L) == 0
	 || errno != ENOSYS;
}

static int
install_filter (void)
{
  struct sock_filter prog[4 * NCALLS + 5];
  unsigned n = 0, notify;
  int fd;

  for (unsigned i = 0; i < NCALLS; i++)
    if (has_call (i))
      n += 4;
  notify = n + 1;
  n = 0;
  for (unsigned i = 0; i < NCALLS; i++)
    {
      if (!has_call (i))
	continue;
      prog[n++] = (struct sock_filter)
	BPF_STMT (BPF_LD | BPF_W | BPF_ABS,
		  offsetof (struct seccomp_data, arch));
      prog[n++] = (struct sock_filter)
	BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, calls[i].arch, 0, 2);
      prog[n++] = (struct sock_filter)
	BPF_STMT (BPF_LD | BPF_W | BPF_ABS,
		  offsetof (struct seccomp_data, nr));
      prog[n] = (struct sock_filter)
	BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, calls[i].nr, notify - n - 1, 0);
      n++;
    }
  prog[n++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K,
					     SECCOMP_RET_ALLOW);
  if ((__fa_policy.action == FA_PASS || __fa_policy.action == FA_FILL)
      && __fa_policy.trace.path[0] == '\0')
    {
      prog[n++] = (struct sock_filter)
	BPF_STMT (BPF_LD | BPF_W | BPF_ABS,
		  offsetof (struct seccomp_data, args[1]));
      prog[n++] = (struct sock_filter)
	BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
      prog[n++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K,
						 SECCOMP_RET_ALLOW);
    }
  prog[n++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K,
					     SECCOMP_RET_USER_NOTIF);
  struct sock_fprog fprog = { (unsigned short) n, prog };

  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return -1;
  /* A caller whose call we have taken is not interrupted by a signal
     (Linux 5.19): a fill is not restarted from the start for each of
     Go's preemption signals.  */
  fd = (int) syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		      SECCOMP_FILTER_FLAG_NEW_LISTENER
		      | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &fprog);
  if (fd < 0 && errno == EINVAL)
    fd = (int) syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
  return fd;
}

/* The child, in a process group of its own if GROUP: filter, listener to the parent over SOCK, go-ahead, exec.  */
_Noreturn void
sv_run (int sock, char **argv, const sigset_t *mask,
	const struct sigaction *xfsz, const struct sigaction *pipe, int group,
	struct itimerval *timers)
{
  int lfd, err = 0;
  char go;
  union
  {
    struct cmsghdr h;
    char buf[CMSG_SPACE (sizeof (int))];
  } c;
  struct iovec iov = { &err, sizeof err };
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

  sigaction (SIGXFSZ, xfsz, NULL);
  sigaction (SIGPIPE, pipe, NULL);
  if (group)
    setpgid (0, 0);
  lfd = install_filter ();
  if (lfd < 0)
    err = errno;
  else
    {
      memset (&c, 0, sizeof c);
      m.msg_control = c.buf;
      m.msg_controllen = sizeof c.buf;
      c.h.cmsg_level = SOL_SOCKET;
      c.h.cmsg_type = SCM_RIGHTS;
      c.h.cmsg_len = CMSG_LEN (sizeof (int));
      memcpy (CMSG_DATA (&c.h), &lfd, sizeof lfd);
    }
  if (sendmsg (sock, &m, 0) < 0 || lfd < 0)
    _exit (CANNOT);
  close (lfd);
  /* Killed with us: run directly, COMMAND would die of a SIGKILL to
     our process group (timeout -k, killpg) or to us, and it is not in
     the first if in a group of its own; nor would its calls be answered
     without us.  Our death before this shows as no go-ahead.  */
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  if (read (sock, &go, 1) != 1)
    _exit (CANNOT);
  close (sock);
  unsetenv ("FALLOCATE_SHIM_POLICY");
  unsetenv ("FALLOCATE_SHIM_TRACE");
  setenv (SUPERVISED, "1", 1);
  setrlimit (RLIMIT_NOFILE, &sv_nofile);
  /* COMMAND's mask only now: a signal we hold (sv_hold) that came
     before ends this process here, as it would have ended COMMAND, not
     on the way, where we would take its death for a failure.  */
  sigprocmask (SIG_SETMASK, mask, NULL);
  sv_timers (timers, 1);
  execvp (argv[0], argv);
  err = errno;
  fprintf (stderr, "fallocate-shim: %s: %s\n", argv[0], strerror (err));
  _exit (err == ENOENT ? 127 : CANNOT);
}

/* The listener, received from the child over SOCK: the descriptor, or -1
   with the child's error in *ERR.  */
int
sv_receive (int sock, int *err)
{
  union
  {
    struct cmsghdr h;
    char buf[CMSG_SPACE (sizeof (int))];
  } c;
  struct iovec iov = { err, sizeof *err };
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
		      .msg_control = c.buf, .msg_controllen = sizeof c.buf };
  struct cmsghdr *h;
  int fd = -1;

  *err = EIO;
  if (recvmsg (sock, &m, MSG_CMSG_CLOEXEC) != sizeof *err || *err != 0)
    return -1;
  for (h = CMSG_FIRSTHDR (&m); h != NULL; h = CMSG_NXTHDR (&m, h))
    if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS)
      memcpy (&fd, CMSG_DATA (h), sizeof fd);
  if (fd < 0)
    *err = EIO;
  return fd;
}

/* Whether a supervisor of ours already answers this process's calls:
   one said so in the environment, and the kernel confirms that a
   listener is there (a second one is refused with EBUSY: one per
   process), tried in a child of ours.  */
int
sv_nested (void)
{
  struct sock_filter allow = BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_fprog fprog = { 1, &allow };
  struct sigaction dfl = { .sa_handler = SIG_DFL }, chld;
  int status, r = 0;
  pid_t pid, w = -1;

  if (getenv (SUPERVISED) == NULL)
    return 0;
  /* SIGCHLD ignored (as we may have been started) would reap the probe
     before we could ask it.  */
  sigaction (SIGCHLD, &dfl, &chld);
  if ((pid = fork ()) == 0)
    _exit (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
	   && syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		       SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog) < 0
	   && errno == EBUSY ? 0 : 1);
  while (pid > 0 && (w = waitpid (pid, &status, 0)) < 0 && errno == EINTR)
    ;
  if (w == pid)
    r = WIFEXITED (status) && WEXITSTATUS (status) == 0;
  sigaction (SIGCHLD, &chld, NULL);
  return r;
}
