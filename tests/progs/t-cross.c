/* t-cross: a call on one file never waits for a fill of another, when
   the slot it is given was the last of a thread that calls again on its
   own file without the table's lock (fa-lock.c).  Run under gdb by
   rawfork.exp: thread X takes file A's turn and lets it go (its slot
   free, keyed to A); thread H holds a turn on another file, so that
   the table is not emptied; thread Y, calling on file B for the first
   time, is stopped by gdb once its slot is looked up, before it goes
   on; X, the only thread run meanwhile, calls on A again (its last
   slot), and holds the turn for 3 s as a stuck fill would.  Y then
   must get B's turn at once, not when X lets A's go.  Without gdb
   (GO unset by it) there is no interleaving to check: it says so.  */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "fa-file.h"
#include "tcheck.h"

static volatile int go, h_done;
static volatile double x_got, y_got;

static double
now (void)
{
  struct timespec t;

  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static void
name (struct fa_file *f, unsigned long long ino)
{
  memset (f, 0, sizeof *f);
  f->st.st_dev = (dev_t) 0x0000001200000034ULL;
  f->st.st_ino = (ino_t) ino;
}

/* Where gdb lets thread X run alone until Y may go on.  */
void __attribute__ ((noinline))
t_cross_x_holds (void)
{
  __asm__ volatile ("");
}

static void *
holder (void *arg)
{
  struct fa_file f;

  (void) arg;
  name (&f, 0x0000000700000009ULL);
  __fa_lock (&f);
  while (!h_done)
    usleep (1000);
  __fa_unlock (&f);
  return NULL;
}

static void *
caller_y (void *arg)
{
  struct fa_file f;

  (void) arg;
  name (&f, 0x000000b0000000c0ULL);
  __fa_lock (&f);
  y_got = now ();
  __fa_unlock (&f);
  return NULL;
}

int
main (void)
{
  pthread_t h, y;
  struct fa_file f;

  name (&f, 0x000000a0000000a1ULL);
  __fa_lock (&f);
  pthread_create (&h, NULL, holder, NULL);
  usleep (100000);
  __fa_unlock (&f);
  pthread_create (&y, NULL, caller_y, NULL);
  for (int i = 0; i < 20000 && !go; i++)
    usleep (1000);
  if (!go)
    {
      pthread_join (y, NULL);
      h_done = 1;
      pthread_join (h, NULL);
      t_unsupported ("t-cross: gdb never stopped thread Y");
      return t_done ();
    }
  name (&f, 0x000000a0000000a1ULL);
  __fa_lock (&f);
  x_got = now ();
  t_cross_x_holds ();
  sleep (3);
  __fa_unlock (&f);
  pthread_join (y, NULL);
  h_done = 1;
  pthread_join (h, NULL);
  t_ok (y_got - x_got < 1.5, "t-cross: the call on B got its turn %.2f s "
	"after another thread took A's again, for 3 s", y_got - x_got);
  return t_done ();
}
