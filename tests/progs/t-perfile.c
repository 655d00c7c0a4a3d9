/* t-perfile DIR MIB [raw]: calls on different files never wait for
   each other's fill; calls on one file take turns.  Thread A fills MIB
   MiB of file a; once a has begun to grow, thread B asks for 4 KiB of
   file b, whose inode number is a's modulo 16, and thread C for 4 KiB
   past the end of a.  B must return before A, C after A.  The calls
   are posix_fallocate64 (run under fa-seccomp ENOSYS), or with RAW the
   fallocate system call itself (run under fallocate-shim --supervise on
   a filesystem without fallocate).  */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

static int raw;

struct call
{
  int fd;
  int64_t off, len;
  double start, end;
  int r;
};

static double
now (void)
{
  struct timespec t;

  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

static void *
run (void *arg)
{
  struct call *c = arg;

  c->start = now ();
  if (raw)
    c->r = syscall (SYS_fallocate, c->fd, 0, c->off, c->len) < 0 ? errno : 0;
  else
    c->r = posix_fallocate64 (c->fd, c->off, c->len);
  c->end = now ();
  return NULL;
}

/* Whether C spent most of its time until W's end.  */
static int
waited (const struct call *c, const struct call *w)
{
  return c->end - c->start >= 0.8 * (w->end - c->start);
}

/* One round: A, B and C as above.  1 if it shows B did not wait, 0 if
   it shows B waited, -1 if A's fill ended too soon after B's call began
   to tell (under valgrind B's thread starts late and a 40 MiB fill can
   end within a few ms of it).  */
static int
one_round (const char *dir, int64_t big, int *ok_c, int *ok_all)
{
  char pa[4096], pb[4096];
  pthread_t ta, tb, tc;
  int a = t_create (dir, "perfile-a", pa, sizeof pa);
  int b = t_sibling (dir, a, pb, sizeof pb);
  if (b < 0)
    {
      close (a);
      unlink (pa);
      return -2;
    }
  struct call ca = { a, 0, big, 0, 0, -1 };
  struct call cb = { b, 0, 4096, 0, 0, -1 };
  struct call cc = { a, big + 4096, 4096, 0, 0, -1 };

  pthread_create (&ta, NULL, run, &ca);
  /* A holds a's turn once a grows.  */
  for (int i = 0; i < 20000 && t_alloc (a) == 0; i++)
    usleep (100);
  pthread_create (&tb, NULL, run, &cb);
  pthread_create (&tc, NULL, run, &cc);
  pthread_join (ta, NULL);
  pthread_join (tb, NULL);
  pthread_join (tc, NULL);
  printf ("# a: %d in %.3f s; b: %d, %.3f s in, %.3f s long; c: %d, "
	  "returned %.3f s after a\n", ca.r, ca.end - ca.start, cb.r,
	  cb.start - ca.start, cb.end - cb.start, cc.r, cc.end - ca.end);
  *ok_c = waited (&cc, &ca);
  *ok_all = ca.r == 0 && cb.r == 0 && cc.r == 0 && t_size (a) == big + 8192
    && t_nohole (a, 0, big) && t_nohole (b, 0, 4096);
  close (a);
  close (b);
  unlink (pa);
  unlink (pb);
  /* The clock read after a call returns lags it a little.  */
  if (cb.end < ca.end - 0.01)
    return 1;
  /* Waiting is spending most of the time until A's end, with A's end
     50 ms or more after B's start.  */
  if (ca.end - cb.start >= 0.05 && waited (&cb, &ca))
    return 0;
  return -1;
}

int
main (int argc, char **argv)
{
  int r = -1, ok_c = 0, ok_all = 0;

  if (argc < 3)
    {
      fprintf (stderr, "usage: t-perfile DIR MIB [raw]\n");
      return 2;
    }
  raw = argc > 3 && strcmp (argv[3], "raw") == 0;
  int64_t big = atoll (argv[2]) << 20;
  /* Up to five rounds, until one tells.  */
  for (int i = 0; i < 5 && r == -1; i++)
    {
      r = one_round (argv[1], big, &ok_c, &ok_all);
      if (r == -2)
	{
	  t_unsupported ("no file whose inode number is a's modulo 16 in "
			 "256");
	  return t_done ();
	}
      if (!ok_all || !ok_c)
	break;
    }
  t_ok (ok_all, "the three calls return 0, both files allocated");
  t_ok (ok_c, "a call on the same file waits for the fill");
  if (r == 1)
    t_ok (1, "a call on another file returns during a fill");
  else if (r == 0)
    t_ok (0, "a call on another file returns during a fill (it waited "
	  "for it)");
  else
    t_unsupported ("a call on another file returns during a fill: in "
		   "five rounds a's fill never lasted 50 ms past b's "
		   "start");
  return t_done ();
}
