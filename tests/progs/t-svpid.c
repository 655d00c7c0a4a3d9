/* t-svpid X Y SHIM...: a caller of fallocate-shim --supervise killed after
   the supervisor received its call and before it took the caller's
   descriptor, and its thread ID given to another process meanwhile,
   whose same descriptor number is open on Y.  The supervisor must answer
   nobody: X and Y keep size 0.  Taking the descriptor of the process
   that now has the ID, and allocating on it, is what the check of the
   notification after pidfd_getfd (supervise/answer.c) prevents.

   Root only: it ptraces the supervisor, stopping the worker that
   received the call at the return of its SECCOMP_IOCTL_NOTIF_RECV, and
   sets the next process ID with /proc/sys/kernel/ns_last_pid.

   Run as "t-svpid X Y SHIM...", it runs "SHIM --supervise t-svpid
   --command X", whose COMMAND forks the caller (so that COMMAND, and with
   it the supervisor, outlive it); the caller opens X as descriptor 10
   and makes the call.  */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tcheck.h"

#define FD 10
#define LEN (1 << 20)
#define MAXT 64

/* An UNSUPPORTED line, and the exit of a run that proved nothing.  */
static int
unsupported (const char *why)
{
  t_unsupported ("%s", why);
  return t_done ();
}

static long long
size_of (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 ? (long long) st.st_size : -1;
}

/* COMMAND: the caller in a child, which prints its pid on stdout (a
   pipe) and makes its call once it reads a byte from stdin; "reaped" on
   stdout once it is gone; exits when stdin ends.  */
static int
command (const char *x)
{
  char c;
  pid_t pid = fork ();

  if (pid == 0)
    {
      int fd = open (x, O_RDWR);
      if (fd < 0 || dup2 (fd, FD) < 0)
	_exit (2);
      printf ("%d\n", (int) getpid ());
      fflush (stdout);
      if (read (0, &c, 1) != 1)
	_exit (2);
      syscall (SYS_fallocate, FD, 0, (off_t) 0, (off_t) LEN);
      _exit (0);
    }
  waitpid (pid, NULL, 0);
  printf ("reaped\n");
  fflush (stdout);
  while (read (0, &c, 1) > 0)
    ;
  return 0;
}

/* Per traced thread: the system call it last entered, and its second
   argument.  */
static struct
{
  pid_t tid;
  long nr, arg1;
} seen[MAXT];

static int
slot (pid_t tid)
{
  for (int i = 0; i < MAXT; i++)
    if (seen[i].tid == tid)
      return i;
    else if (seen[i].tid == 0)
      {
	seen[i].tid = tid;
	seen[i].nr = -1;
	return i;
      }
  return 0;
}

/* The system call thread T is stopped at the exit of, as /proc tells:
   one it entered before we traced it (a worker waiting to receive).  */
static void
from_proc (pid_t t, long *nr, long *arg1)
{
  char path[64];
  unsigned long a0, a1;

  snprintf (path, sizeof path, "/proc/%d/syscall", (int) t);
  FILE *f = fopen (path, "r");
  if (f == NULL)
    return;
  if (fscanf (f, "%ld %lx %lx", nr, &a0, &a1) == 3)
    *arg1 = (long) a1;
  fclose (f);
}

/* Whether every thread of SV but its first waits to receive (a pool
   still starting could make a worker we would not trace).  */
static int
settled (pid_t sv)
{
  char path[64], buf[64];
  struct dirent *d;
  int waiting = 0, others = 0;

  snprintf (path, sizeof path, "/proc/%d/task", (int) sv);
  DIR *dir = opendir (path);
  if (dir == NULL)
    return 0;
  while ((d = readdir (dir)) != NULL)
    {
      pid_t t = atoi (d->d_name);
      if (t <= 0 || t == sv)
	continue;
      others++;
      snprintf (path, sizeof path, "/proc/%d/syscall", (int) t);
      FILE *f = fopen (path, "r");
      if (f != NULL)
	{
	  waiting += fgets (buf, sizeof buf, f) != NULL
		     && strtol (buf, NULL, 10) == SYS_ioctl;
	  fclose (f);
	}
    }
  closedir (dir);
  return others > 0 && waiting == others;
}

static void
wake (int sig)
{
  (void) sig;
}

/* Every thread of process SV seized; the one that returns from a
   SECCOMP_IOCTL_NOTIF_RECV that received, left stopped: its ID, or -1.
   The others are let go on (traced, without stops) at their next stop.
   Once every thread is traced, a byte to GO lets the caller call.  */
static pid_t
catch_receiver (pid_t sv, int go)
{
  char path[64];
  struct dirent *d;
  int n = 0;

  snprintf (path, sizeof path, "/proc/%d/task", (int) sv);
  DIR *dir = opendir (path);
  if (dir == NULL)
    return -1;
  while ((d = readdir (dir)) != NULL)
    {
      pid_t t = atoi (d->d_name);
      if (t <= 0)
	continue;
      if (ptrace (PTRACE_SEIZE, t, 0, PTRACE_O_TRACESYSGOOD
		  | PTRACE_O_TRACECLONE) < 0
	  || ptrace (PTRACE_INTERRUPT, t, 0, 0) < 0)
	return -1;
      n++;
    }
  closedir (dir);
  /* Each thread stops once for the interrupt: then, its system calls.  */
  for (int i = 0; i < n; i++)
    {
      int st;
      pid_t t = waitpid (-1, &st, __WALL);
      if (t < 0)
	return -1;
      ptrace (PTRACE_SYSCALL, t, 0, 0);
    }
  /* Now the call may come; within 20 s (an alarm ends the wait).  */
  if (write (go, "g", 1) != 1)
    return -1;
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = wake;
  sigaction (SIGALRM, &sa, NULL);
  alarm (20);
  for (;;)
    {
      int st, sig = 0;
      pid_t t = waitpid (-1, &st, __WALL);
      struct __ptrace_syscall_info info;

      if (t < 0)
	return -1;
      if (!WIFSTOPPED (st))
	continue;
      /* All of it: valgrind does not know what the request writes.  */
      memset (&info, 0, sizeof info);
      if (WSTOPSIG (st) == (SIGTRAP | 0x80)
	  && ptrace (PTRACE_GET_SYSCALL_INFO, t, sizeof info, &info) > 0)
	{
	  int s = slot (t);
	  if (info.op == PTRACE_SYSCALL_INFO_ENTRY)
	    seen[s].nr = (long) info.entry.nr,
	    seen[s].arg1 = (long) info.entry.args[1];
	  else if (info.op == PTRACE_SYSCALL_INFO_EXIT
		   && (seen[s].nr >= 0
		       || (from_proc (t, &seen[s].nr, &seen[s].arg1), 1))
		   && seen[s].nr == SYS_ioctl
		   && (unsigned long) seen[s].arg1 == SECCOMP_IOCTL_NOTIF_RECV
		   && info.exit.rval == 0)
	    {
	      alarm (0);
	      return t;
	    }
	  if (info.op == PTRACE_SYSCALL_INFO_EXIT)
	    seen[s].nr = -1;
	}
      else if (WSTOPSIG (st) != SIGTRAP && st >> 16 == 0)
	sig = WSTOPSIG (st);	/* a signal for the tracee: delivered */
      ptrace (PTRACE_SYSCALL, t, 0, sig);
    }
}

/* Every traced thread of SV but KEEP let go: stopped, then detached
   (each was last resumed by us, so it runs or has a stop to report).  */
static void
release_others (pid_t sv, pid_t keep)
{
  char path[64];
  struct dirent *d;

  snprintf (path, sizeof path, "/proc/%d/task", (int) sv);
  DIR *dir = opendir (path);
  if (dir == NULL)
    return;
  while ((d = readdir (dir)) != NULL)
    {
      pid_t t = atoi (d->d_name);
      int st;
      if (t <= 0 || t == keep || ptrace (PTRACE_INTERRUPT, t, 0, 0) < 0
	  || waitpid (t, &st, __WALL) != t)
	continue;
      int sig = WIFSTOPPED (st) && WSTOPSIG (st) != SIGTRAP
		&& WSTOPSIG (st) != (SIGTRAP | 0x80) && st >> 16 == 0
		? WSTOPSIG (st) : 0;
      ptrace (PTRACE_DETACH, t, 0, sig);
    }
  closedir (dir);
}

/* A process whose ID is PID, holding Y as descriptor FD (open before
   this returns), until killed: its pid, or -1 if the ID could not be
   had.  */
static pid_t
take_id (pid_t pid, const char *y)
{
  for (int tries = 0; tries < 10; tries++)
    {
      FILE *f = fopen ("/proc/sys/kernel/ns_last_pid", "w");
      if (f == NULL)
	return -1;
      fprintf (f, "%d", (int) pid - 1);
      fclose (f);
      int p[2];
      char c1;
      if (pipe (p) < 0)
	return -1;
      pid_t c = fork ();
      if (c == 0)
	{
	  int fd = open (y, O_RDWR);
	  if (fd >= 0 && dup2 (fd, FD) == FD)
	    write (p[1], "y", 1);
	  pause ();
	  _exit (0);
	}
      close (p[1]);
      int opened = read (p[0], &c1, 1) == 1;
      close (p[0]);
      if (c == pid && opened)
	return c;
      kill (c, SIGKILL);
      waitpid (c, NULL, 0);
    }
  return -1;
}

int
main (int argc, char **argv)
{
  if (argc == 3 && strcmp (argv[1], "--command") == 0)
    return command (argv[2]);
  if (argc < 4)
    {
      fprintf (stderr, "usage: t-svpid X Y SHIM...\n");
      return 2;
    }
  setvbuf (stdout, NULL, _IOLBF, 0);
  if (geteuid () != 0)
    return unsupported ("t-svpid: needs root (ptrace, ns_last_pid)");
  const char *x = argv[1], *y = argv[2];
  int in[2], out[2];
  close (open (x, O_RDWR | O_CREAT | O_TRUNC, 0644));
  close (open (y, O_RDWR | O_CREAT | O_TRUNC, 0644));
  if (pipe (in) < 0 || pipe (out) < 0)
    return 2;
  pid_t sv = fork ();
  if (sv == 0)
    {
      char *args[64];
      int n = 0;
      for (int i = 3; i < argc && n < 58; i++)
	args[n++] = argv[i];
      args[n++] = (char *) "--supervise";
      args[n++] = argv[0];
      args[n++] = (char *) "--command";
      args[n++] = (char *) x;
      args[n] = NULL;
      dup2 (in[0], 0);
      dup2 (out[1], 1);
      close (in[1]);
      close (out[0]);
      execvp (args[0], args);
      _exit (127);
    }
  close (in[0]);
  close (out[1]);
  FILE *ready = fdopen (out[0], "r");
  /* The caller's pid: COMMAND runs, so the supervisor has given it the
     go-ahead (tracing it before then would stop it at that write, which
     nobody would let go on: the caller would never come).  */
  pid_t caller = -1;
  if (fscanf (ready, "%d", &caller) != 1)
    {
      kill (sv, SIGKILL);
      return unsupported ("t-svpid: COMMAND did not start");
    }
  for (int i = 0; i < 500 && !settled (sv); i++)
    usleep (10000);
  pid_t worker = catch_receiver (sv, in[1]);
  if (worker < 0)
    {
      kill (sv, SIGKILL);
      return unsupported ("t-svpid: could not stop the supervisor's worker "
			  "after it received the call within 20 s (ptrace)");
    }
  release_others (sv, worker);
  kill (caller, SIGKILL);
  char word[16];
  int reaped = fscanf (ready, "%15s", word) == 1
	       && strcmp (word, "reaped") == 0;
  pid_t other = reaped ? take_id (caller, y) : -1;
  if (other < 0)
    {
      ptrace (PTRACE_DETACH, worker, 0, 0);
      kill (sv, SIGKILL);
      return unsupported ("t-svpid: the killed caller's ID could not be "
			  "given to another process (ns_last_pid)");
    }
  printf ("# caller %d killed after the worker %d received its call; "
	  "its ID now held by a process with Y as descriptor %d\n",
	  (int) caller, (int) worker, FD);
  ptrace (PTRACE_DETACH, worker, 0, 0);
  struct timespec ms = { 0, 10 * 1000 * 1000 };
  for (int i = 0; i < 50 && size_of (y) == 0; i++)
    nanosleep (&ms, NULL);
  t_ok (size_of (y) == 0, "a caller killed after the receive, "
      "its ID reused: the new holder's file untouched");
  t_ok (size_of (x) == 0, "the killed caller's file untouched");
  kill (other, SIGKILL);
  waitpid (other, NULL, 0);
  close (in[1]);
  int st;
  waitpid (sv, &st, 0);
  t_ok (WIFEXITED (st) && WEXITSTATUS (st) == 0,
      "the wrapper exits with COMMAND's status, 0");
  return t_done ();
}
