/* t-handler DIR [LOOPS [SECONDS]]: a signal handler's call (item 1 of an
   outside review).  Under fa-seccomp: the main thread calls
   posix_fallocate in a loop on an O_WRONLY descriptor of a file with
   holes inside the range (the fallback then starts a thread of its own:
   pthread_create, pthread_join), while a fast interval timer's handler
   (ITIMER_REAL every 100 us, SA_RESTART) calls posix_fallocate on
   another such file.  The review saw every run hang after 2,333-3,481
   loops: the handler interrupted pthread_create or pthread_join inside
   glibc's stack cache lock, and its own call's thread waited on it.
   In a forked child, LOOPS loops (20000) or SECONDS seconds (20),
   whichever first; the parent kills a child whose loop count stops
   moving for 10 s and reports where it hung.  Every call must return
   0, as the kernel's fallocate does.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

struct shared
{
  atomic_long loops, bad, handled, handler_bad, during;
  atomic_int last, handler_last;
};

static struct shared *sh;
static int hfd;
static volatile sig_atomic_t calling;

/* Holes inside [8 KiB, 16 KiB) again: the file cut to its first 4 KiB
   of data and grown back to 64 KiB.  */
static void
holes_again (int fd)
{
  ftruncate (fd, 4096);
  ftruncate (fd, 64 << 10);
}

static void
handler (int sig)
{
  int saved = errno;
  (void) sig;
  if (calling)
    atomic_fetch_add (&sh->during, 1);
  holes_again (hfd);
  int r = posix_fallocate64 (hfd, 8192, 8192);
  atomic_fetch_add (&sh->handled, 1);
  if (r)
    {
      atomic_fetch_add (&sh->handler_bad, 1);
      atomic_store (&sh->handler_last, r);
    }
  errno = saved;
}

static double
now (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

static int
wronly (const char *dir, const char *name)
{
  char path[4096];
  int fd = t_create (dir, name, path, sizeof path);

  t_put (fd, 0, 4096, 80);
  ftruncate (fd, 64 << 10);
  close (fd);
  fd = open (path, O_WRONLY | O_LARGEFILE);
  unlink (path);
  return fd;
}

static void
child (const char *dir, long loops, double seconds)
{
  int fd = wronly (dir, "handler-main");
  hfd = wronly (dir, "handler-sig");
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sa.sa_flags = SA_RESTART;
  sigaction (SIGALRM, &sa, NULL);
  struct itimerval it = { { 0, 100 }, { 0, 100 } };
  setitimer (ITIMER_REAL, &it, NULL);
  double end = now () + seconds;
  for (long i = 0; i < loops && now () < end; i++)
    {
      holes_again (fd);
      calling = 1;
      int r = posix_fallocate64 (fd, 8192, 8192);
      calling = 0;
      if (r)
	{
	  atomic_fetch_add (&sh->bad, 1);
	  atomic_store (&sh->last, r);
	}
      atomic_fetch_add (&sh->loops, 1);
    }
  memset (&it, 0, sizeof it);
  setitimer (ITIMER_REAL, &it, NULL);
  _exit (0);
}

int
main (int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : ".";
  long loops = argc > 2 ? atol (argv[2]) : 20000;
  double seconds = argc > 3 ? atof (argv[3]) : 20;
  int st = 0, hung = 0;

  if (!t_filtered ())
    {
      t_unsupported ("handler: run it under fa-seccomp");
      return 0;
    }
  if (t_valgrind ())
    {
      t_unsupported ("handler: under valgrind a 100 us timer's handler "
		     "leaves the loop a call or two in 20 s");
      return 0;
    }
  sh = mmap (NULL, sizeof *sh, PROT_READ | PROT_WRITE,
	     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED)
    {
      perror ("mmap");
      return 2;
    }
  memset (sh, 0, sizeof *sh);
  fflush (stdout);
  pid_t pid = fork ();
  if (pid == 0)
    child (dir, loops, seconds);
  /* No loop for 10 s: hung.  A loop takes well under a millisecond.  */
  long seen = -1;
  double moved = now ();
  for (;;)
    {
      if (waitpid (pid, &st, WNOHANG) == pid)
	break;
      long n = atomic_load (&sh->loops) + atomic_load (&sh->handled);
      if (n != seen)
	seen = n, moved = now ();
      else if (now () - moved > 10)
	{
	  hung = 1;
	  kill (pid, SIGKILL);
	  waitpid (pid, &st, 0);
	  break;
	}
      usleep (100000);
    }
  long done = atomic_load (&sh->loops);
  printf ("# handler: %ld loops, %ld handler calls (%ld during a call), "
	  "status 0x%x\n", done, (long) atomic_load (&sh->handled),
	  (long) atomic_load (&sh->during), st);
  if (hung)
    t_ok (0, "handler: a timer's handler calling during O_WRONLY calls, "
	  "every call returns (hung after %ld loops, %ld handler calls)",
	  done, (long) atomic_load (&sh->handled));
  else
    t_ok (WIFEXITED (st) && WEXITSTATUS (st) == 0,
	  "handler: a timer's handler calling during O_WRONLY calls, every "
	  "call returns (%ld loops, status 0x%x)", done, st);
  t_ok (atomic_load (&sh->bad) == 0 && atomic_load (&sh->handler_bad) == 0,
	"handler: every call returned 0 (the loop: %ld failed, last %d; the "
	"handler: %ld of %ld failed, last %d)", (long) atomic_load (&sh->bad),
	atomic_load (&sh->last), (long) atomic_load (&sh->handler_bad),
	(long) atomic_load (&sh->handled), atomic_load (&sh->handler_last));
  if (!hung && atomic_load (&sh->during) == 0)
    t_unsupported ("handler: the timer never landed inside a call");
  return t_done ();
}
