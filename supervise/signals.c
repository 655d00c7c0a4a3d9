/* fallocate-supervise and signals: COMMAND's process group, the
   signals passed on to it, its stops and continues under job control,
   and COMMAND's end as this process's own.  The pool's threads block
   every signal: they are the main thread's.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "supervise.h"

/* Where forwarded signals go (forward): COMMAND's process group, or
   COMMAND, or nowhere (0).  */
static volatile pid_t target;
/* Whether COMMAND has a process group of its own (sv_own_group).  */
static int own;
/* Our controlling terminal, or -1.  */
static int tty = -1;
/* Whether we lead our session (sv_forward).  */
static int leader;
/* A process of ours in COMMAND's group (sv_anchor), and its pidfd; 0
   and -1 once reaped, or if there is none.  */
static pid_t anchor;
static int anchor_fd = -1;
/* SIGCONT came (sv_wait).  */
static volatile sig_atomic_t continued;
/* A forwarded signal that had nowhere to go (forward), or 0.  */
static volatile sig_atomic_t ending;

/* Signals passed on to COMMAND (forwarding): every one whose default is
   to end a process and that only kill(2) sends us, the real-time ones
   too; not those of a fault, abort(3), a CPU or file size limit or
   seccomp, which are our own, nor SIGPIPE (a trace written to a closed
   pipe), nor 32 and 33, which glibc keeps for itself.  */
static sigset_t forwarded;

static void
forwarding (void)
{
  static const int sigs[] = {
    SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM,
    SIGPROF, SIGIO, SIGPWR,
#ifdef SIGSTKFLT
    SIGSTKFLT,
#endif
  };

  sigemptyset (&forwarded);
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    sigaddset (&forwarded, sigs[i]);
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
    sigaddset (&forwarded, sig);
}

/* Every signal in *M but those of KEEP (none if KEEP is NULL), 32 and
   33 too, which glibc's sigaddset leaves out: a mask for the kernel
   (rt_sigprocmask, ppoll).  */
static void
all_but (sigset_t *m, const sigset_t *keep)
{
  memset (m, 0xff, sizeof *m);
  for (int sig = 1; keep && sig < NSIG; sig++)
    if (sigismember (keep, sig) == 1)
      sigdelset (m, sig);
}

/* Whether COMMAND gets a process group of its own: yes, unless this
   process is in its terminal's foreground group.  Then a signal sent to
   our group (kill -TERM -PGID) reaches COMMAND once,
   from us, not twice; and once COMMAND has exited, one sent to us still
   reaches what it left behind in its group, for which we wait.  In the
   foreground, COMMAND stays in our group, so that the terminal's job
   control (stopping, the foreground) works on both.  */
int
sv_own_group (void)
{
  int fg;

  tty = open ("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC);
  if (tty < 0)
    return 1;
  fg = tcgetpgrp (tty) == getpgrp ();
  if (fg)
    {
      close (tty);
      tty = -1;
    }
  return !fg;
}

/* A process of ours that joins COMMAND's process group GROUP and
   stays there, doing nothing, until we go: a process group's id is not
   reused while the group has a member (a zombie one too), so while it
   is unreaped, -GROUP is COMMAND's group, whoever else has left it
   (sv_wait).  It ignores every signal it can, so that one sent to the
   group leaves it there.  Without it (fork, pidfd_open failed, or it
   was killed), signals go to the group only while COMMAND is there,
   unreaped: the group's id is COMMAND's process id.  */
void
sv_anchor (pid_t group)
{
  pid_t parent = getpid (), a = fork ();

  if (a == 0)
    {
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      if (getppid () != parent)
	_exit (0);
      for (int s = 1; s < NSIG; s++)
	signal (s, SIG_IGN);
      setpgid (0, group);
      /* Nobody's pipe held open, nor the socket that tells the child
	 we are gone.  */
#ifdef SYS_close_range
      if (syscall (SYS_close_range, 0U, ~0U, 0) < 0)
#endif
	for (int fd = 0; fd < 3; fd++)
	  close (fd);
      for (;;)
	pause ();
    }
  if (a < 0)
    return;
  setpgid (a, group);		/* as the anchor does: whichever runs first */
  anchor = a;
  anchor_fd = (int) syscall (SYS_pidfd_open, a, 0);
  if (anchor_fd < 0 || getpgid (a) != group)
    {
      sv_unanchor ();
      if (anchor_fd >= 0)
	close (anchor_fd);
      anchor_fd = -1;
    }
}

/* Our mask when we started (sv_hold), COMMAND's too.  */
static sigset_t started;

/* The forwarded signals ignored or blocked when we started (nohup, a
   caller's mask): COMMAND has the same, so one with nowhere to go would
   not have ended it, and does not end us.  */
static sigset_t ignored;

/* In our group COMMAND gets the terminal's signals itself; sent with
   kill to us alone, they are passed on, and so is the hangup's SIGHUP
   where we lead the session (ssh -t HOST CMD, a terminal emulator,
   setsid -c): the kernel sends it to the session's leader alone.  With
   nowhere to go (COMMAND has exited; what it left under the filter,
   in our group or in other sessions, is not ours to signal), a signal
   ends us as it would have ended COMMAND (unless IGNORED), once sv_end
   has waited for the fills in our own threads: sv_wait returns at
   once, and the leftovers' calls then get ENOSYS (fallocate-shim(1)).
   Run only where the signals are unblocked: inside sv_wait's ppoll, and
   in sv_end.  */
static void
forward (int sig, siginfo_t *si, void *uc)
{
  pid_t t = target;

  (void) uc;
  if (t == 0)
    {
      if (!sigismember (&ignored, sig) && !ending)
	ending = sig;		/* a wait status: killed by SIG, no core */
    }
  else if (own || si->si_code != SI_KERNEL || (sig == SIGHUP && leader))
    kill (t, sig);
}

static void
wake (int sig)
{
  if (sig == SIGCONT)
    continued = 1;
}

/* The signals sv_forward passes on, blocked or unblocked (HOW).  */
static void
held (int how)
{
  sigset_t old;

  sigprocmask (how, &forwarded, &old);
  for (int sig = 1; how == SIG_BLOCK && sig < NSIG; sig++)
    if (sigismember (&forwarded, sig) == 1 && sigismember (&old, sig) == 1)
      sigaddset (&ignored, sig);
}

/* The signals sv_forward passes on, blocked until it does: one that came
   after COMMAND's process and the anchor were made, and before the
   handlers were there, would kill us and leave both to init.  */
void
sv_hold (const sigset_t *mask)
{
  forwarding ();
  started = *mask;
  held (SIG_BLOCK);
}

/* Signals passed on to COMMAND, process PID, in its own process group
   if GROUP, those held since sv_hold among them.  SIGCHLD and SIGCONT
   wake sv_wait, and only it.  */
void
sv_forward (pid_t pid, int group)
{
  struct sigaction sa;
  sigset_t s;

  own = group;
  leader = getsid (0) == getpid ();
  target = own ? -pid : pid;
  /* No core of ours, whatever signal ends us (COMMAND, made, keeps its
     limit): it would overwrite COMMAND's (by default both are "core" in
     the same directory), and our status would say "core dumped".  */
  setrlimit (RLIMIT_CORE, &(struct rlimit) { 0, 0 });
  for (int sig = 1; sig < NSIG; sig++)
    {
      if (sigismember (&forwarded, sig) != 1)
	continue;
      if (sigaction (sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
	sigaddset (&ignored, sig);
      memset (&sa, 0, sizeof sa);
      sa.sa_sigaction = forward;
      sa.sa_flags = SA_SIGINFO | SA_RESTART;
      sigaction (sig, &sa, NULL);
    }
  /* Unblocked here even if they were when we started: they are
     COMMAND's, which has that mask, to block or not.  */
  held (SIG_UNBLOCK);
  sigemptyset (&s);
  sigaddset (&s, SIGCHLD);
  sigaddset (&s, SIGCONT);
  sigprocmask (SIG_BLOCK, &s, NULL);
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = wake;
  sigaction (SIGCHLD, &sa, NULL);
  sigaction (SIGCONT, &sa, NULL);
}

/* Job control, where COMMAND has its own group: the shell stops and
   continues our group, and gives the terminal to it; COMMAND's follows.
   COMMAND stopped by the terminal (SIGTSTP, or SIGTTIN, SIGTTOU in the
   background): we stop too, with the same signal, so that the shell
   sees the job stop.  Continued: so is COMMAND's group, and if the
   terminal is now ours (fg), it is handed on to COMMAND's group.  */
static void
job (pid_t pid)
{
  siginfo_t si;
  pid_t t;

  if (!own)
    return;
  memset (&si, 0, sizeof si);
  if (waitid (P_PID, (id_t) pid, &si, WSTOPPED | WNOHANG) == 0
      && si.si_pid == pid && (si.si_status == SIGTSTP
			      || si.si_status == SIGTTIN
			      || si.si_status == SIGTTOU))
    raise (si.si_status);
  if (continued)
    {
      continued = 0;
      t = target;
      if (t == 0)
	return;
      if (tty >= 0 && tcgetpgrp (tty) == getpgrp ())
	tcsetpgrp (tty, -t);
      kill (t, SIGCONT);
    }
}

/* Until COMMAND, process PID (PIDFD), has exited and no process under
   the filter is left (the listener hangs up), or a signal came that has
   nowhere to go (forward); meanwhile, job control.  COMMAND's status;
   every signal but job control's stops blocked (sv_end).  Each end is
   known before the process is reaped, so that a signal is never
   forwarded to a reused id: COMMAND's, in our group; the anchor's, in
   its own.  */
int
sv_wait (pid_t pid, int pidfd)
{
  struct pollfd p[3] = { { pidfd, POLLIN, 0 }, { anchor_fd, POLLIN, 0 },
			 { listener, 0, 0 } };
  int status = 0, exited = 0;
  sigset_t stops, woken, during;

  /* Outside ppoll only job control's stops act (job raises them); in
     it, the forwarded signals, SIGCHLD and SIGCONT too: none comes
     between a look at ENDING and the wait.  Every other signal, 32 and
     33 too, is held until sv_end, so that none cuts off an in-thread
     fill.  */
  sigemptyset (&stops);
  sigaddset (&stops, SIGTSTP);
  sigaddset (&stops, SIGTTIN);
  sigaddset (&stops, SIGTTOU);
  sigorset (&woken, &stops, &forwarded);
  sigaddset (&woken, SIGCHLD);
  sigaddset (&woken, SIGCONT);
  all_but (&during, &woken);
  sv_block (&stops);
  for (;;)
    {
      job (pid);
      /* The anchor gone: COMMAND's group is known to be there only
	 while COMMAND is.  */
      if (p[1].revents & POLLIN)
	{
	  if (exited)
	    target = 0;
	  sv_unanchor ();
	  p[1].fd = -1;
	}
      if (p[0].revents & POLLIN)
	{
	  /* In our group, or in its own without the anchor, signals go
	     nowhere from now on.  */
	  if (!own || p[1].fd < 0)
	    target = 0;
	  while (waitpid (pid, &status, 0) < 0)
	    if (errno != EINTR)
	      {
		perror (ME ": waitpid");
		exit (CANNOT);
	      }
	  p[0].fd = -1;
	  exited = 1;
	}
      if (exited && (p[2].revents & (POLLHUP | POLLERR)))
	{
	  /* The anchor ended and reaped here (sv_unanchor).  */
	  target = 0;
	  sv_unanchor ();
	  return status;
	}
      if (ending)
	return status;
      for (int i = 0; i < 3; i++)
	p[i].revents = 0;
      ppoll (p, 3, NULL, &during);
    }
}

/* The anchor ended and reaped here, if there is one: left to die with
   us, it would be reaped by init or a subreaper (tini, a build sandbox)
   as a child of theirs they never made, or by no one (an init that
   reaps nothing), and count among the user's processes for good.  */
void
sv_unanchor (void)
{
  if (anchor <= 0)
    return;
  kill (anchor, SIGKILL);
  while (waitpid (anchor, NULL, 0) < 0 && errno == EINTR)
    ;
  anchor = 0;
}

/* Every signal blocked in this thread but those of KEEP, by
   rt_sigprocmask (_NSIG bits): 32 and 33 too, which glibc's sigprocmask
   leaves out (32 would end us part way through an in-thread fill).  */
void
sv_block (const sigset_t *keep)
{
  sigset_t m;

  all_but (&m, keep);
  syscall (SYS_rt_sigprocmask, SIG_SETMASK, &m, NULL, _NSIG / 8);
}

/* COMMAND's end (STATUS), or that of the first signal with nowhere to
   go (forward: TARGET is 0 from here on), as this process's own, once
   the calls answered in threads of ours are (sv_apart_quiet).  Every
   signal but the forwarded ones is held meanwhile, as in sv_wait: one
   that would end us (32, SIGXCPU) does once they are done, with the
   mask we started with, set by glibc's sigprocmask, which leaves 32
   and 33 unblocked.  */
_Noreturn void
sv_end (int status)
{
  sv_block (&forwarded);
  sv_apart_quiet ();
  if (ending)
    sv_finish (ending);
  sigprocmask (SIG_SETMASK, &started, NULL);
  sv_finish (status);
}

/* Timers set before we were run (alarm, setitimer: exec keeps them)
   are COMMAND's, which would have had them: taken from us into T
   before COMMAND is made, so that none signals us, and given to it
   (GIVE) before its exec.  A few milliseconds later, that is all.  */
void
sv_timers (struct itimerval *t, int give)
{
  static const int which[] = { ITIMER_REAL, ITIMER_VIRTUAL, ITIMER_PROF };
  struct itimerval off;

  memset (&off, 0, sizeof off);
  for (size_t i = 0; i < sizeof which / sizeof which[0]; i++)
    setitimer (which[i], give ? &t[i] : &off, give ? NULL : &t[i]);
}

/* COMMAND's end, as this process's own.  */
_Noreturn void
sv_finish (int status)
{
  if (WIFSIGNALED (status))
    {
      int sig = WTERMSIG (status);
      /* The kernel's struct sigaction, all zeros: SIG_DFL in any
	 layout.  Not glibc's signal, which refuses the two signals it
	 keeps for itself (32 and 33, which a process can still die of).  */
      long dfl[16] = { 0 };
      sigset_t s;

      /* The signal again, without a core of ours (sv_forward).  */
      syscall (SYS_rt_sigaction, sig, dfl, NULL, (NSIG - 1) / 8);
      sigemptyset (&s);
      sigaddset (&s, sig);
      sigprocmask (SIG_UNBLOCK, &s, NULL);
      syscall (SYS_tgkill, getpid (), syscall (SYS_gettid), sig);
      exit (128 + sig);
    }
  exit (WEXITSTATUS (status));
}
