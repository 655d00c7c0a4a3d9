/* fallocate-supervise and signals: COMMAND's process group, the
   signals passed on to it, and COMMAND's end as this process's own.
   The pool's threads block every signal: they are the main thread's.  */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "supervise.h"

/* Where forwarded signals go (forward): COMMAND's process group, or
   COMMAND, or nowhere (0).  */
static volatile pid_t target;
/* Whether COMMAND has a process group of its own (sv_own_group).  */
static int own;

/* Signals passed on to COMMAND.  */
static const int forwarded[] = {
  SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2
};

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

/* Signals passed on to COMMAND, process PID, in its own process group
   if GROUP.  */
void
sv_forward (pid_t pid, int group)
{
  own = group;
  target = own ? -pid : pid;
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
    {
      struct sigaction sa;

      memset (&sa, 0, sizeof sa);
      sa.sa_sigaction = forward;
      sa.sa_flags = SA_SIGINFO | SA_RESTART;
      sigaction (forwarded[i], &sa, NULL);
    }
}

/* COMMAND has exited, not yet reaped: in our group, signals go nowhere
   from now on (its process id may be reused once reaped); in its own,
   they go on to what is left of its group.  Its group's id stays valid
   while anything is left in the group (to go astray once it is empty,
   the process ids would have to wrap around meanwhile).  */
void
sv_command_exited (void)
{
  if (!own)
    target = 0;
}

/* COMMAND's end, as this process's own.  */
_Noreturn void
sv_finish (int status)
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
