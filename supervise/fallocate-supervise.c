/* fallocate-supervise COMMAND [ARGS...]: run COMMAND with its fallocate
   system calls answered by this process, for the programs that
   LD_PRELOAD cannot reach (static, Go, musl, raw system call users).
   fallocate-shim --supervise runs it; the policy and the trace come in
   FALLOCATE_SHIM_POLICY and FALLOCATE_SHIM_TRACE, read by the library's
   own constructor (io/fa-policy.c) into __fa_policy, and are not passed
   on to COMMAND.

   The child sets no_new_privs and installs a seccomp filter that sends
   fallocate alone (every number the ABI's kernel has for it:
   fa-seccomp.h in the sysdeps leaf) to user notification, hands the
   listener to this process over a socket, waits for its go-ahead and
   execs COMMAND.  Every process and thread of COMMAND inherits the
   filter.  This process answers each call (answer): it takes the
   caller's descriptor with pidfd_getfd (the same open file description,
   so the caller's offset is the one the fallback leaves alone), checks
   that the notification is still valid (the caller not killed, its
   thread id not reused), runs it as the library does (__fa_answer:
   the system call; on EOPNOTSUPP or ENOSYS, for mode 0 the fallback, for
   other modes under --emulate the emulation), traces it, closes its
   copy and replies.  Closing the copy drops none of the caller's POSIX
   record locks: they belong to the caller's descriptor table, not to
   ours.

   Threads (the pool's rule): each one waits for a notification and
   answers it; one that takes a call and leaves no other waiting starts
   another before it answers.  So there is always a thread waiting for
   the next call, whatever the number in flight: a call never waits for
   another call's fill, and a supervised program whose answer needs
   another of its calls answered (a FUSE server under the filter, whose
   fallocate handler calls fallocate) never deadlocks.  There is no cap:
   a cap would bring both back.  The fallback's mapping way holds this
   process's mmap lock for reading while it faults a window in: anything
   that maps memory meanwhile (a thread stack from mmap, first of all)
   waits for that, and every page fault of every thread waits behind
   it.  So the threads' stacks are carved out of one mapping made at
   the start, their pages touched when they start, and threads never end
   (as many as calls were ever answered at once, and one); all use one
   malloc arena (each new one would be mapped).  So starting a thread
   maps nothing while fewer than STACKS have been started, and a fill
   holds up only what maps memory: another fill's window, and past
   STACKS threads the start of one.

   This process exits when COMMAND has exited and no process under the
   filter is left (the listener hangs up), with COMMAND's status.  If it
   dies first, the kernel answers every pending and later fallocate call
   of COMMAND with ENOSYS.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include "fa-policy.h"
#include "fa-seccomp.h"

#ifndef PIDFD_THREAD
# define PIDFD_THREAD O_EXCL
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
# define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
# define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW (4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
# define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
# define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

#define ME "fallocate-shim: --supervise"
/* Thread stacks mapped at the start; more threads get theirs from
   pthread_create.  */
#define STACKS 256
#define STACK (256 << 10)
#define TOUCHED (32 << 10)
/* Threads started with the supervisor: the first call, and one coming
   while it is answered, find one waiting.  */
#define FIRST 2
/* Set in COMMAND's environment: a supervisor answers its calls
   (nested).  */
#define SUPERVISED "FALLOCATE_SHIM_SUPERVISED"
/* What the exit status says when COMMAND could not be run.  */
#define CANNOT 126

static int listener;
/* Where forwarded signals go (forward): COMMAND's process group, or
   COMMAND, or nowhere (0).  */
static volatile pid_t target;
/* Whether COMMAND has a process group of its own (own_group).  */
static int own;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t quiet = PTHREAD_COND_INITIALIZER;
static int idle, busy, stacks;
static char *stack_area;

static void *worker (void *);

/* The filter: FA_SECCOMP_CALLS to user notification, all else allowed.
   Its size: four instructions per call, and the two returns.  */
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
  struct sock_filter prog[4 * NCALLS + 2];
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

/* The process (thread group) of thread TID, from /proc, or TID.  */
static pid_t
tgid_of (pid_t tid)
{
  char path[64], buf[512];
  int fd;
  ssize_t n;

  snprintf (path, sizeof path, "/proc/%ld/status", (long) tid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return tid;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return tid;
  buf[n] = '\0';
  char *p = strstr (buf, "\nTgid:");
  return p ? (pid_t) strtol (p + 6, NULL, 10) : tid;
}

/* Whether the caller of REQ still waits for our answer.  */
static int
valid (const struct seccomp_notif *req)
{
  __u64 id = req->id;

  return ioctl (listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* The caller's descriptor FD as one of ours, in *COPY: 0, an error
   number for the caller (EBADF: FD is not open there), or -1 if the
   caller no longer waits.  The thread's own descriptor table (Linux 6.9:
   a thread pidfd), else its process's.  The check after pidfd_getfd
   makes it the caller's: while the notification is valid the thread is
   alive, so its id was not reused meanwhile.  */
static int
take (const struct seccomp_notif *req, int fd, int *copy)
{
  int pidfd = (int) syscall (SYS_pidfd_open, req->pid, PIDFD_THREAD), err;

  *copy = -1;
  if (pidfd < 0 && errno == EINVAL)
    pidfd = (int) syscall (SYS_pidfd_open, tgid_of (req->pid), 0);
  if (pidfd < 0)
    return valid (req) ? errno : -1;
  *copy = (int) syscall (SYS_pidfd_getfd, pidfd, fd, 0);
  err = errno;
  close (pidfd);
  if (!valid (req))
    {
      if (*copy >= 0)
	close (*copy);
      *copy = -1;
      return -1;
    }
  return *copy < 0 ? err : 0;
}

/* One notification, answered.  */
static void
answer (const struct seccomp_notif *req)
{
  struct seccomp_notif_resp resp;
  int fd = -1, mode = 0, err, copy = -1, known;
  int64_t off = 0, len = 0;
  const char *how = "";

  known = fa_seccomp_args (&req->data, &fd, &mode, &off, &len);
  if (!known)
    err = ENOSYS;		/* not a call the filter sends: untraced */
  else if (__fa_policy.action == FA_NOOP || __fa_policy.action == FA_INJECT)
    err = __fa_answer (&__fa_policy, -1, mode, off, len, &how);
  else if ((err = take (req, fd, &copy)) == 0)
    err = __fa_answer (&__fa_policy, copy, mode, off, len, &how);
  else if (err < 0)
    return;
  if (copy >= 0)
    close (copy);
  memset (&resp, 0, sizeof resp);
  resp.id = req->id;
  /* No ptrace access to the caller (not dumpable, another user, and we
     without CAP_SYS_PTRACE): we cannot act for it, so the kernel makes
     the call as if we were not there (Linux 5.5), rather than we answer
     with an error it would not give.  Its answer is not ours to trace.  */
  if (known && err == EPERM && copy < 0)
    {
      resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
      ioctl (listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
      return;
    }
  if (__fa_policy.trace.path[0] && known)
    __fa_trace (&__fa_policy.trace, tgid_of (req->pid), "fallocate", 0, fd,
		mode, off, len, err, how);
  resp.error = -err;
  /* ENOENT: the caller was killed, or interrupted, meanwhile.  */
  ioctl (listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

/* A thread that answers calls, on a stack of STACK_AREA while there is
   one left.  */
static int
start_worker (void)
{
  pthread_attr_t a;
  pthread_t t;
  int err, slot;

  pthread_mutex_lock (&mu);
  slot = stack_area != NULL && stacks < STACKS ? stacks++ : -1;
  pthread_mutex_unlock (&mu);
  pthread_attr_init (&a);
  pthread_attr_setdetachstate (&a, PTHREAD_CREATE_DETACHED);
  if (slot >= 0)
    pthread_attr_setstack (&a, stack_area + (size_t) slot * STACK, STACK);
  err = pthread_create (&t, &a, worker, NULL);
  pthread_attr_destroy (&a);
  return err;
}

/* The stacks, each with a guard page below it; NULL if they cannot be
   had (then pthread_create maps each).  */
static void
map_stacks (void)
{
  long page = sysconf (_SC_PAGESIZE);
  char *p = mmap (NULL, (size_t) STACKS * STACK, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
		  -1, 0);

  if (p == MAP_FAILED)
    return;
  for (int i = 0; i < STACKS; i++)
    if (mprotect (p + (size_t) i * STACK, (size_t) page, PROT_NONE) < 0)
      {
	munmap (p, (size_t) STACKS * STACK);
	return;
      }
  stack_area = p;
}

/* Whether every process under the filter is gone: Linux 6.6 and later
   then answer NOTIF_RECV at once, with ENOENT.  */
static int
hung_up (void)
{
  struct pollfd p = { .fd = listener, .events = 0 };

  return poll (&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

static void *
worker (void *arg)
{
  sigset_t all;
  volatile char touch[TOUCHED];

  (void) arg;
  /* The pages of the stack that answering uses, faulted in now rather
     than while a fill holds the mmap lock.  */
  for (size_t i = 0; i < sizeof touch; i += 1024)
    touch[i] = 0;
  /* Signals are the main thread's (forward).  */
  sigfillset (&all);
  pthread_sigmask (SIG_BLOCK, &all, NULL);
  for (;;)
    {
      struct seccomp_notif req;
      int r, err, last;

      pthread_mutex_lock (&mu);
      idle++;
      pthread_mutex_unlock (&mu);
      memset (&req, 0, sizeof req);
      r = ioctl (listener, SECCOMP_IOCTL_NOTIF_RECV, &req);
      err = errno;
      pthread_mutex_lock (&mu);
      idle--;
      if (r == 0)
	busy++;
      last = r == 0 && idle == 0;
      pthread_mutex_unlock (&mu);
      if (r < 0)
	{
	  /* ENOENT: the caller went away before we took its call, or
	     everyone did.  */
	  if (err == EINTR || (err == ENOENT && !hung_up ()))
	    continue;
	  break;
	}
      /* No other thread waits: one more, before answering (the pool's
	 rule, at the top of this file).  Two threads taking calls at once
	 may both start one: one too many, never one too few.  */
      if (last)
	start_worker ();
      answer (&req);
      pthread_mutex_lock (&mu);
      if (--busy == 0)
	pthread_cond_broadcast (&quiet);
      pthread_mutex_unlock (&mu);
    }
  return NULL;
}

/* Signals passed on to COMMAND.  */
static const int forwarded[] = {
  SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2
};

/* Whether COMMAND gets a process group of its own: yes, unless this
   process is in its terminal's foreground group.  Then a signal sent to
   our group (kill -TERM -PGID, timeout's kill (0)) reaches COMMAND once,
   from us, not twice; and once COMMAND has exited, one sent to us still
   reaches what it left behind in its group, for which we wait.  In the
   foreground, COMMAND stays in our group, so that the terminal's job
   control (stopping, the foreground) works on both.  */
static int
own_group (void)
{
  int fd = open ("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC), fg;

  if (fd < 0)
    return 1;
  fg = tcgetpgrp (fd) == getpgrp ();
  close (fd);
  return !fg;
}

/* In our group COMMAND gets the terminal's signals itself; sent with
   kill to us alone, they are passed on.  */
static void
forward (int sig, siginfo_t *si, void *uc)
{
  (void) uc;
  if (target != 0 && (own || si->si_code != SI_KERNEL))
    kill (target, sig);
}

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

/* The child: filter, listener to the parent over SOCK, go-ahead, exec.  */
static _Noreturn void
run (int sock, char **argv, const sigset_t *mask,
     const struct sigaction *xfsz, const struct sigaction *pipe)
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
  sigprocmask (SIG_SETMASK, mask, NULL);
  if (own)
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
  if (read (sock, &go, 1) != 1)
    _exit (CANNOT);
  close (sock);
  unsetenv ("FALLOCATE_SHIM_POLICY");
  unsetenv ("FALLOCATE_SHIM_TRACE");
  setenv (SUPERVISED, "1", 1);
  execvp (argv[0], argv);
  err = errno;
  fprintf (stderr, "fallocate-shim: %s: %s\n", argv[0], strerror (err));
  _exit (err == ENOENT ? 127 : CANNOT);
}

/* The listener, received from the child over SOCK: the descriptor, or -1
   with the child's error in *ERR.  */
static int
receive (int sock, int *err)
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

/* The child, which never ran COMMAND, killed and reaped; exit.  */
static _Noreturn void
give_up (pid_t pid)
{
  kill (pid, SIGKILL);
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
  exit (CANNOT);
}

/* COMMAND's end, as this process's own.  */
static _Noreturn void
finish (int status)
{
  if (WIFSIGNALED (status))
    {
      int sig = WTERMSIG (status);
      struct rlimit none = { 0, 0 };
      sigset_t s;

      /* The signal again, without a core of ours.  */
      setrlimit (RLIMIT_CORE, &none);
      signal (sig, SIG_DFL);
      sigemptyset (&s);
      sigaddset (&s, sig);
      sigprocmask (SIG_UNBLOCK, &s, NULL);
      raise (sig);
      exit (128 + sig);
    }
  exit (WEXITSTATUS (status));
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

/* Whether a supervisor of ours already answers this process's calls:
   one said so in the environment, and the kernel confirms that a
   listener is there (a second one is refused with EBUSY: one per
   process), tried in a child of ours.  */
static int
nested (void)
{
  struct sock_filter allow = BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_fprog fprog = { 1, &allow };
  int status;
  pid_t pid;

  if (getenv (SUPERVISED) == NULL || (pid = fork ()) < 0)
    return 0;
  if (pid == 0)
    _exit (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
	   && syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		       SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog) < 0
	   && errno == EBUSY ? 0 : 1);
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return 0;
  return WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

int
main (int argc, char **argv)
{
  int sv[2], err, probe, status;
  struct sigaction ign, xfsz, pipe;
  sigset_t mask;
  siginfo_t info;
  struct pollfd p;
  long r;
  pid_t pid;

  if (argc > 1 && strcmp (argv[1], "--") == 0)
    argc--, argv++;
  if (argc < 2)
    {
      fprintf (stderr, "usage: fallocate-supervise [--] COMMAND [ARGS...]\n");
      return 2;
    }
  /* Under a supervisor of ours (fallocate-shim --supervise nested):
     it answers COMMAND's calls too, with its policy, and a second
     listener cannot be had.  COMMAND runs in our place.  */
  if (nested ())
    {
      unsetenv ("FALLOCATE_SHIM_POLICY");
      unsetenv ("FALLOCATE_SHIM_TRACE");
      execvp (argv[1], argv + 1);
      fprintf (stderr, "fallocate-shim: %s: %s\n", argv[1], strerror (errno));
      return errno == ENOENT ? 127 : CANNOT;
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
  sigprocmask (SIG_SETMASK, NULL, &mask);

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    {
      perror (ME ": socketpair");
      return CANNOT;
    }
  own = own_group ();
  pid = fork ();
  if (pid < 0)
    {
      perror (ME ": fork");
      return CANNOT;
    }
  if (pid == 0)
    {
      close (sv[0]);
      run (sv[1], argv + 1, &mask, &xfsz, &pipe);
    }
  close (sv[1]);
  if (own)
    setpgid (pid, pid);		/* as the child does: whichever runs first */
  listener = receive (sv[0], &err);
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
  /* pidfd_getfd (Linux 5.6 or later), tried on the child's socket.  */
  probe = (int) syscall (SYS_pidfd_open, pid, 0);
  if (probe >= 0)
    {
      int fd = (int) syscall (SYS_pidfd_getfd, probe, sv[1], 0);

      err = errno;
      close (probe);
      probe = fd;
    }
  else
    err = errno;
  if (probe < 0)
    {
      cannot (err == EPERM ? "pidfd_getfd on COMMAND (ptrace access)"
	      : "pidfd_open and pidfd_getfd (Linux 5.6 or later)", err);
      give_up (pid);
    }
  close (probe);

  target = own ? -pid : pid;
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
    {
      struct sigaction sa;

      memset (&sa, 0, sizeof sa);
      sa.sa_sigaction = forward;
      sa.sa_flags = SA_SIGINFO | SA_RESTART;
      sigaction (forwarded[i], &sa, NULL);
    }
  map_stacks ();
#ifdef M_ARENA_MAX		/* glibc's; musl's malloc has no arenas */
  mallopt (M_ARENA_MAX, 1);
#endif
  for (int i = 0; i < FIRST; i++)
    if ((err = start_worker ()) != 0)
      {
	cannot ("pthread_create", err);
	give_up (pid);
      }
  if (write (sv[0], "", 1) != 1)
    {
      perror (ME ": starting COMMAND");
      give_up (pid);
    }
  close (sv[0]);

  /* COMMAND's end: known before the child is reaped, so that a signal
     is never forwarded to a reused process id.  Its group's id stays
     valid while anything is left in the group (to go astray once it is
     empty, the process ids would have to wrap around meanwhile).  */
  while (waitid (P_PID, (id_t) pid, &info, WEXITED | WNOWAIT) < 0)
    if (errno != EINTR)
      {
	perror (ME ": waitid");
	exit (CANNOT);
      }
  if (!own)
    target = 0;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      {
	perror (ME ": waitpid");
	exit (CANNOT);
      }
  /* The processes COMMAND left behind: until none is left under the
     filter, the listener stays up for them.  */
  p.fd = listener;
  p.events = 0;
  while (poll (&p, 1, -1) < 0 || !(p.revents & (POLLHUP | POLLERR)))
    ;
  pthread_mutex_lock (&mu);
  while (busy > 0)
    pthread_cond_wait (&quiet, &mu);
  pthread_mutex_unlock (&mu);
  finish (status);
}
