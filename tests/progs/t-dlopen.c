/* t-dlopen LIB DIR: a signal handler's call, in a thread's first use of
   the library, with the library loaded by dlopen (under fa-seccomp
   ENOSYS, so that the fallback runs).  Each of 300 rounds starts a
   thread that allocates and frees memory without end; SIGUSR1 then comes
   to it, and its handler calls posix_fallocate64 on a file in DIR.  The
   call must return: thread-local data reached through __tls_get_addr
   (a dlopened library's general-dynamic model) is allocated with malloc
   at a thread's first use, and a handler interrupting malloc waited for
   ever.  Built without the library (tests/libfallocate.preload
   /dlopen.exp).  */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 300

typedef int (*pf_fn) (int, int64_t, int64_t);
static pf_fn pf;
static int fd;
static volatile int stop, answered, result;

static void
on_usr1 (int sig)
{
  (void) sig;
  result = pf (fd, 0, 4096);
  answered = 1;
}

static void *
churn (void *arg)
{
  (void) arg;
  while (!stop)
    free (malloc (100 << 10));
  return NULL;
}

int
main (int argc, char **argv)
{
  char path[4096];
  struct sigaction sa = { .sa_handler = on_usr1 };

  if (argc != 3)
    {
      fprintf (stderr, "usage: t-dlopen LIB DIR\n");
      return 2;
    }
  void *lib = dlopen (argv[1], RTLD_NOW);
  pf = lib ? (pf_fn) dlsym (lib, "posix_fallocate64") : NULL;
  if (!pf)
    {
      printf ("FAIL: dlopen %s: %s\n", argv[1], dlerror ());
      return 1;
    }
  snprintf (path, sizeof path, "%s/dlopen-file", argv[2]);
  fd = open (path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  sigaction (SIGUSR1, &sa, NULL);
  for (int r = 0; r < ROUNDS; r++)
    {
      struct timespec ms = { 0, 1000 * 1000 };
      pthread_t t;

      stop = answered = 0;
      result = -1;
      pthread_create (&t, NULL, churn, NULL);
      nanosleep (&ms, NULL);
      pthread_kill (t, SIGUSR1);
      for (int w = 0; w < 5000 && !answered; w++)
	nanosleep (&ms, NULL);
      if (!answered)
	{
	  printf ("FAIL: a handler's call in a new thread returns (round %d: "
		  "not in 5 s)\n", r);
	  fflush (stdout);
	  unlink (path);
	  _exit (1);
	}
      stop = 1;
      pthread_join (t, NULL);
      if (result != 0)
	{
	  printf ("FAIL: a handler's call in a new thread returns 0 (round "
		  "%d: %d)\n", r, result);
	  return 1;
	}
      ftruncate (fd, 0);
    }
  printf ("PASS: a handler's call in a new thread returns, %d rounds\n",
	  ROUNDS);
  unlink (path);
  return 0;
}
