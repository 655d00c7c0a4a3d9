/* t-trace DIR, FALLOCATE_SHIM_TRACE naming a file in DIR: the trace
   appends one line per call, and never takes descriptors 0, 1 or 2 from
   the program.  Each case calls posix_fallocate (which must still succeed
   at once) and looks at what the trace did.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

static const char *dir, *trace;
static int dfd;			/* the file the calls allocate */

static volatile sig_atomic_t alarmed;

static void
on_alarm (int sig)
{
  (void) sig;
  alarmed = 1;
}

/* posix_fallocate on DFD, which must return 0 within 5 s.  SIGALRM's
   handler is installed without SA_RESTART: an open blocked on a FIFO then
   fails with EINTR and the call returns, late, instead of hanging.  */
static void
call (const char *what)
{
  struct sigaction sa = { .sa_handler = on_alarm };
  int r;

  sigaction (SIGALRM, &sa, NULL);
  alarmed = 0;
  alarm (5);
  r = posix_fallocate (dfd, 0, 4096);
  alarm (0);
  t_ok (r == 0 && !alarmed, "%s: the call returns 0 at once (got %s%s)",
	what, strerror (r), alarmed ? ", after 5 s" : "");
}

/* The contents of PATH as a string, or "" if it cannot be read.  */
static const char *
slurp (const char *path)
{
  static char buf[4096];
  int fd = open (path, O_RDONLY | O_NONBLOCK), n = 0;

  if (fd >= 0 && (n = (int) read (fd, buf, sizeof buf - 1)) < 0)
    n = 0;
  buf[n] = '\0';
  if (fd >= 0)
    close (fd);
  return buf;
}

/* TEXT with its newlines as \n, for a message.  */
static const char *
shown (const char *text)
{
  static char buf[8192];
  size_t n = 0;

  for (; *text && n < sizeof buf - 3; text++)
    if (*text == '\n')
      buf[n++] = '\\', buf[n++] = 'n';
    else
      buf[n++] = *text;
  buf[n] = '\0';
  return buf;
}

/* No file at the trace path: one line, as before, in a new file.  */
static void
fresh (void)
{
  char want[512];

  unlink (trace);
  call ("new trace file");
  snprintf (want, sizeof want,
	    "libfallocate[%ld]: posix_fallocate(%d, 0, 4096) = 0\n",
	    (long) getpid (), dfd);
  t_ok (strcmp (slurp (trace), want) == 0,
	"new trace file: the line \"%.*s\" (got \"%s\")",
	(int) strlen (want) - 1, want, shown (slurp (trace)));
}

/* A child that closes the descriptors in MASK (of 0, 1 and 2), makes a
   call, and then opens a file of its own until it is descriptor 1 and
   prints into it: the call leaves the descriptors closed, the file gets
   them in order, the output goes into it and not into the trace, and the
   trace has the call.  */
static void
low_fds (int mask, const char *what)
{
  char own[4096], want[512];
  int status;
  pid_t pid;

  snprintf (own, sizeof own, "%s/own", dir);
  unlink (own);
  unlink (trace);
  fflush (stdout);
  if ((pid = fork ()) == 0)
    {
      int bad = 0;

      for (int i = 0; i <= 2; i++)
	if (mask & 1 << i)
	  close (i);
      if (posix_fallocate (dfd, 0, 4096) != 0)
	bad |= 1;
      for (int i = 0; i <= 2; i++)
	if (mask & 1 << i && fcntl (i, F_GETFD) >= 0)
	  bad |= 2;
      for (int i = 0; i <= 1; i++)
	if (mask & 1 << i
	    && open (own, O_WRONLY | O_CREAT | O_APPEND, 0600) != i)
	  bad |= 4;
      printf ("the program's own output\n");
      fflush (stdout);
      _exit (bad);
    }
  waitpid (pid, &status, 0);
  status = WIFEXITED (status) ? WEXITSTATUS (status) : 128;
  t_ok (status < 8, "%s: the program runs to its end (exit status %d)",
	what, status);
  t_ok (!(status & 1), "%s: the call succeeds", what);
  t_ok (!(status & 2), "%s: still closed after the call", what);
  t_ok (!(status & 4), "%s: the program's next files get them", what);
  t_ok (strcmp (slurp (own), "the program's own output\n") == 0,
	"%s: the program's output in its file (got \"%s\")", what,
	shown (slurp (own)));
  snprintf (want, sizeof want,
	    "libfallocate[%ld]: posix_fallocate(%d, 0, 4096) = 0\n",
	    (long) pid, dfd);
  t_ok (strcmp (slurp (trace), want) == 0,
	"%s: the trace holds the call's line alone (got \"%s\")", what,
	shown (slurp (trace)));
  unlink (own);
}

int
main (int argc, char **argv)
{
  char path[4096];

  trace = getenv ("FALLOCATE_SHIM_TRACE");
  if (argc != 2 || trace == NULL || trace[0] != '/')
    {
      fprintf (stderr, "usage: FALLOCATE_SHIM_TRACE=/FILE t-trace DIR\n");
      return 2;
    }
  dir = argv[1];
  dfd = t_create (dir, "data", path, sizeof path);
  fresh ();
  low_fds (1 << 1, "descriptor 1 closed");
  low_fds (7, "descriptors 0, 1 and 2 closed");
  close (dfd);
  unlink (path);
  unlink (trace);
  return t_done ();
}
