/* t-turns DIR: a signal handler's call interrupting a call of ours that
   waits for its turn (under fa-seccomp ENOSYS, on DIR).  Thread A fills
   1 GiB of a file; 30 ms in, thread B asks for 8 KiB of it, and waits
   its turn; 60 ms in, B gets SIGUSR1, whose handler asks for 4 KiB of
   the same file: the handler's call goes on at once, without a turn
   (libfallocate(3): wherever it interrupts a call of ours), returning
   0 before A's call ends, and B's call still after A's.  Counting only
   the turns a thread held, the handler waited for A's (an outside
   review; the same gap, between taking a turn and counting it, let two
   threads' handlers wait for each other for ever).  */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

static int fd, handler_r = -1;
static double t0, a_end, b_end, h_end;

static double
now (void)
{
  struct timespec t;

  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + (double) t.tv_nsec / 1e9 - t0;
}

static void
ms (int n)
{
  struct timespec t = { 0, n * 1000000L };

  while (nanosleep (&t, &t) < 0 && errno == EINTR)
    ;
}

static void
handler (int sig)
{
  int saved = errno;

  (void) sig;
  handler_r = posix_fallocate64 (fd, 0, 4096);
  h_end = now ();
  errno = saved;
}

static void *
a (void *arg)
{
  (void) arg;
  int r = posix_fallocate64 (fd, 0, 1LL << 30);
  a_end = now ();
  return (void *) (long) r;
}

static void *
b (void *arg)
{
  (void) arg;
  ms (30);
  int r = posix_fallocate64 (fd, 0, 8192);
  b_end = now ();
  return (void *) (long) r;
}

int
main (int argc, char **argv)
{
  char path[4096];
  struct sigaction sa;
  pthread_t ta, tb;
  void *ra, *rb;

  if (!t_filtered ())
    {
      t_unsupported ("turns: run it under fa-seccomp (the kernel's "
		     "fallocate takes no turn of ours)");
      return t_done ();
    }
  fd = t_create (argc > 1 ? argv[1] : ".", "turns", path, sizeof path);
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigaction (SIGUSR1, &sa, NULL);
  struct timespec z;
  clock_gettime (CLOCK_MONOTONIC, &z);
  t0 = (double) z.tv_sec + (double) z.tv_nsec / 1e9;
  if (pthread_create (&ta, NULL, a, NULL) != 0
      || pthread_create (&tb, NULL, b, NULL) != 0)
    {
      t_ok (0, "turns: two threads");
      return t_done ();
    }
  ms (60);
  pthread_kill (tb, SIGUSR1);
  pthread_join (ta, &ra);
  pthread_join (tb, &rb);
  printf ("# A's call ended at %.3f s, B's at %.3f, the handler's at %.3f\n",
	  a_end, b_end, h_end);
  if (a_end < 0.1)
    t_unsupported ("turns: the first call took %.3f s, too short to tell",
		   a_end);
  else
    t_ok (ra == NULL && rb == NULL && handler_r == 0
	  && h_end < a_end - 0.02 && b_end >= a_end - 0.02,
	  "turns: a handler's call interrupting a call that waits its turn "
	  "goes on at once (returned %d at %.3f s, the holder's call at "
	  "%.3f), the interrupted call still waits (%.3f)", handler_r, h_end,
	  a_end, b_end);
  close (fd);
  unlink (path);
  return t_done ();
}
