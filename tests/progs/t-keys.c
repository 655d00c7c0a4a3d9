/* t-keys [ROUNDS]: the per-file turns of fa-lock.c hold for one file at
   a time, whichever way a call takes its turn.  Eight threads call
   __fa_lock and __fa_unlock (linked statically, where the library's
   hidden functions can be reached) on sixteen files named only by device
   and inode number, whose high and low 32-bit halves differ.  Each
   thread stays on one file for a few calls (the way without a lock:
   the thread's last slot) and then moves to another (the table's
   lock: slots freed, taken for another file, the table's end moved),
   so that every thread's last slot keeps being taken for other files.
   Between the two, the thread counts itself in on the file: two holders
   of one file at once, or a file's turn that never comes, fail it.  */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fa-file.h"
#include "tcheck.h"

#define THREADS 8
#define FILES 16

static int in[FILES], clashes;
static long rounds = 200000;

static void *
caller (void *arg)
{
  unsigned seed = (unsigned) (long) arg * 2654435761u;
  int file = (int) (long) arg % FILES;
  long i;

  for (i = 0; i < rounds; i++)
    {
      struct fa_file f;

      if (rand_r (&seed) % 4 == 0)
	file = rand_r (&seed) % FILES;
      memset (&f, 0, sizeof f);
      f.st.st_dev = (dev_t) 0x0000001200000034ULL + (file & 1);
      f.st.st_ino = (ino_t) 0x0000005600000078ULL + (file >> 1);
      __fa_lock (&f);
      if (__atomic_add_fetch (&in[file], 1, __ATOMIC_SEQ_CST) != 1
	  || f.turn == NULL)
	__atomic_add_fetch (&clashes, 1, __ATOMIC_SEQ_CST);
      if (rand_r (&seed) % 64 == 0)
	sched_yield ();
      __atomic_sub_fetch (&in[file], 1, __ATOMIC_SEQ_CST);
      __fa_unlock (&f);
    }
  return NULL;
}

int
main (int argc, char **argv)
{
  pthread_t th[THREADS];
  long i;

  if (argc > 1)
    rounds = atol (argv[1]);
  else if (t_valgrind ())
    rounds = 5000;
  for (i = 0; i < THREADS; i++)
    if (pthread_create (&th[i], NULL, caller, (void *) i) != 0)
      return 2;
  for (i = 0; i < THREADS; i++)
    pthread_join (th[i], NULL);
  t_ok (clashes == 0, "t-keys: %d of %ld calls held a file's turn with "
	"another, or none", clashes, rounds * THREADS);
  return t_done ();
}
