/* t-sigtable DIR: a signal handler's call, made while its thread looks
   a file's turn up, holds up no call on another file (under fa-seccomp
   ENOSYS, on DIR).  Thread A makes 1-byte calls on file X without end;
   SIGUSR1 comes to it 3000 times, and its handler fills a new 1 MiB of
   file Y, then looks at thread C, which makes 4 KiB calls on file Z
   meanwhile: C must not stay asleep in a futex wait (/proc's syscall
   file) while the handler runs, as a call waiting for the table of
   turns' lock that the handler's thread holds would.  A handler that interrupted A while it held that lock
   went on (as a handler's call does) with the lock held, and every call
   on every file waited for its fill.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

#define MIB (1LL << 20)
#define FILLS 3000

static int x, y, z, fills, fill_mib = 1;
static volatile int stop;
static volatile pid_t c_tid;
static int c_calls, waiting, bad;
/* The first error, and whose call (h: the handler's, a, c) got it.  */
static int first_err;
static char first_who = '-';

/* Whether thread TID is in a futex system call (its /proc syscall
   file: the number first, or "running").  */
static int
in_futex (pid_t tid)
{
  char path[64], buf[64];
  int fd, n;

  snprintf (path, sizeof path, "/proc/self/task/%d/syscall", (int) tid);
  fd = open (path, O_RDONLY);
  if (fd < 0)
    return 0;
  n = (int) read (fd, buf, sizeof buf - 1);
  close (fd);
  buf[n > 0 ? n : 0] = 0;
  return n > 0 && atol (buf) == SYS_futex;
}

/* Whether C is asleep in a futex wait and stays there, its calls not
   going on, for 200 ms while this handler runs: a thread woken but not
   yet run on a loaded machine is still in the system call for a while,
   one that waits for a lock this thread holds, for ever.  */
static int
held_up (void)
{
  struct timespec ms = { 0, 1000 * 1000 };
  int calls = __atomic_load_n (&c_calls, __ATOMIC_RELAXED);

  for (int i = 0; i < 200; i++)
    {
      if (!in_futex (c_tid)
	  || __atomic_load_n (&c_calls, __ATOMIC_RELAXED) != calls)
	return 0;
      nanosleep (&ms, NULL);
    }
  return 1;
}

static void
note (char who, int err)
{
  if (err && __atomic_fetch_or (&bad, 1, __ATOMIC_SEQ_CST) == 0)
    {
      first_err = err;
      first_who = who;
    }
}

static void
on_usr1 (int sig)
{
  int saved = errno;

  (void) sig;
  if (fills < FILLS)
    {
      note ('h', posix_fallocate64 (y, fills * fill_mib * MIB,
				    fill_mib * MIB));
      waiting += c_tid && held_up ();
      fills++;
    }
  errno = saved;
}

static void *
a_calls (void *arg)
{
  (void) arg;
  while (!stop)
    note ('a', posix_fallocate64 (x, 0, 1));
  return NULL;
}

static void *
c_loop (void *arg)
{
  (void) arg;
  c_tid = (pid_t) syscall (SYS_gettid);
  while (!stop)
    {
      note ('c', posix_fallocate64 (z, 0, 4096));
      __atomic_add_fetch (&c_calls, 1, __ATOMIC_RELAXED);
    }
  return NULL;
}

int
main (int argc, char **argv)
{
  char px[4096], py[4096], pz[4096];
  struct sigaction sa;
  pthread_t a, c;
  int n = FILLS;

  if (argc != 2)
    {
      fprintf (stderr, "usage: t-sigtable DIR\n");
      return 2;
    }
  if (t_valgrind ())
    n = 20, fill_mib = 1;
  x = t_create (argv[1], "sigtable-x", px, sizeof px);
  y = t_create (argv[1], "sigtable-y", py, sizeof py);
  z = t_create (argv[1], "sigtable-z", pz, sizeof pz);
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction (SIGUSR1, &sa, NULL);
  pthread_create (&a, NULL, a_calls, NULL);
  pthread_create (&c, NULL, c_loop, NULL);
  for (int i = 0; i < n; i++)
    {
      struct timespec ms = { 0, 1000 * 1000 };
      int before = fills;

      pthread_kill (a, SIGUSR1);
      /* The next one once this one's fill is over.  */
      for (int w = 0; w < 60000 && fills == before; w++)
	nanosleep (&ms, NULL);
      nanosleep (&ms, NULL);
    }
  stop = 1;
  pthread_join (a, NULL);
  pthread_join (c, NULL);
  printf ("# %d fills of %d MiB from the handler, %d calls on another "
	  "file, %d found waiting\n", fills, fill_mib, c_calls, waiting);
  t_ok (!bad && fills == n, "every call returns 0 (%d of %d fills; first "
	"error %d, %c's)", fills, n, first_err, first_who);
  t_ok (waiting == 0, "no call on another file waits for a handler's fill");
  unlink (px);
  unlink (py);
  unlink (pz);
  return t_done ();
}
