/* t-trace DIR, FALLOCATE_SHIM_TRACE naming a file in DIR: the trace
   appends one line per call to a regular file of the process's own user
   with one link, created mode 0600; it never writes anything else, never
   blocks, and never takes descriptors 0, 1 or 2 from the program.  Each
   case puts something at the trace path, calls posix_fallocate (which
   must still succeed at once) and looks at what the trace did to it.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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

/* A new file PATH holding TEXT.  */
static void
plant (const char *path, const char *text)
{
  int fd;

  unlink (path);
  if ((fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0
      || write (fd, text, strlen (text)) != (ssize_t) strlen (text))
    t_ok (0, "%s: %s", path, strerror (errno));
  close (fd);
}

/* No file at the trace path: one line, as before, in a new file of mode
   0600 whatever the umask.  */
static void
fresh (void)
{
  char want[512];
  struct stat st;
  mode_t old = umask (0);

  unlink (trace);
  call ("new trace file");
  umask (old);
  snprintf (want, sizeof want,
	    "libfallocate[%ld]: posix_fallocate(%d, 0, 4096) = 0\n",
	    (long) getpid (), dfd);
  t_ok (strcmp (slurp (trace), want) == 0,
	"new trace file: the line \"%.*s\" (got \"%s\")",
	(int) strlen (want) - 1, want, shown (slurp (trace)));
  if (stat (trace, &st) < 0)
    st.st_mode = 0;
  t_ok ((st.st_mode & 07777) == 0600,
	"new trace file under umask 0: mode 0600 (got %o)",
	(unsigned) st.st_mode & 07777);
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

/* A symlink at the trace path to a file of ours: left alone.  */
static void
symlinked (void)
{
  char victim[4096];

  snprintf (victim, sizeof victim, "%s/victim", dir);
  plant (victim, "victim\n");
  unlink (trace);
  if (symlink (victim, trace) < 0)
    t_ok (0, "symlink: %s", strerror (errno));
  call ("symlink at the trace path");
  t_ok (strcmp (slurp (victim), "victim\n") == 0,
	"symlink at the trace path: its target unchanged (got \"%s\")",
	shown (slurp (victim)));
  unlink (trace);
  unlink (victim);
}

/* A second link to a file of ours (planted, say, as a hard link to a
   file of root's in a sticky directory on the same filesystem): left
   alone.  */
static void
linked (void)
{
  char other[4096];

  snprintf (other, sizeof other, "%s/other", dir);
  plant (other, "linked\n");
  unlink (trace);
  if (link (other, trace) < 0)
    t_ok (0, "link: %s", strerror (errno));
  call ("hard link at the trace path");
  t_ok (strcmp (slurp (other), "linked\n") == 0,
	"hard link at the trace path: the file unchanged (got \"%s\")",
	shown (slurp (other)));
  unlink (trace);
  unlink (other);
}

/* A FIFO: the call does not wait for a reader, and one that is there
   reads nothing and sees no writer come and go (a hangup: the FIFO is
   not even opened, as a device is not).  */
static void
fifo (void)
{
  char buf[512];
  int rfd, r;
  ssize_t n;
  struct pollfd p = { .events = POLLIN };

  unlink (trace);
  if (mkfifo (trace, 0600) < 0)
    t_ok (0, "mkfifo: %s", strerror (errno));
  call ("FIFO without a reader at the trace path");
  rfd = open (trace, O_RDONLY | O_NONBLOCK);
  p.fd = rfd;
  call ("FIFO with a reader at the trace path");
  r = poll (&p, 1, 0);
  t_ok (r == 0,
	"FIFO with a reader at the trace path: not opened (poll: %s%s)",
	p.revents & POLLHUP ? "hangup" : "nothing",
	p.revents & POLLIN ? ", input" : "");
  n = read (rfd, buf, sizeof buf);
  t_ok (rfd >= 0 && (n == 0 || (n < 0 && errno == EAGAIN)),
	"FIFO with a reader at the trace path: nothing written (got %zd "
	"bytes)", n);
  close (rfd);
  unlink (trace);
}

/* As root: a file of another user's, and a device node (of /dev/kmsg,
   the kernel's log, which shows what is written to it): left alone.  */
static void
not_ours (void)
{
  char buf[8192], want[64];
  struct stat st;
  int k, seen = 0;

  if (geteuid () != 0)
    {
      t_unsupported ("another user's file, a device node at the trace "
		     "path: not root");
      return;
    }
  plant (trace, "theirs\n");
  if (chown (trace, 65534, 65534) < 0)
    t_ok (0, "chown: %s", strerror (errno));
  call ("another user's file at the trace path");
  t_ok (strcmp (slurp (trace), "theirs\n") == 0,
	"another user's file at the trace path: unchanged (got \"%s\")",
	shown (slurp (trace)));
  unlink (trace);

  if ((k = open ("/dev/kmsg", O_RDONLY | O_NONBLOCK)) < 0
      || fstat (k, &st) < 0 || lseek (k, 0, SEEK_END) < 0
      || mknod (trace, S_IFCHR | 0600, st.st_rdev) < 0)
    {
      t_unsupported ("a device node at the trace path: %s",
		     strerror (errno));
      if (k >= 0)
	close (k);
      return;
    }
  call ("/dev/kmsg's device node at the trace path");
  /* One record per read, until none is left.  */
  snprintf (want, sizeof want, "libfallocate[%ld]", (long) getpid ());
  for (ssize_t n; (n = read (k, buf, sizeof buf - 1)) >= 0 || errno == EPIPE;)
    if (n > 0)
      buf[n] = '\0', seen |= strstr (buf, want) != NULL;
  t_ok (!seen, "/dev/kmsg's device node at the trace path: nothing "
	"written to the kernel's log");
  close (k);
  unlink (trace);
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
  symlinked ();
  linked ();
  fifo ();
  not_ours ();
  close (dfd);
  unlink (path);
  unlink (trace);
  return t_done ();
}
