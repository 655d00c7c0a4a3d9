/* fallocate-supervise's threads: the pool that waits for calls.

   The pool's rule: each thread waits for a notification and answers it
   (sv_answer); one that takes a call and leaves no other waiting, nor
   one started and about to wait, starts another before it answers.  So there is always a thread waiting for
   the next call, whatever the number in flight: a call never waits for
   another call's fill, and a supervised program whose answer needs
   another of its calls answered (a FUSE server under the filter, whose
   fallocate handler calls fallocate) never deadlocks.  There is no cap:
   a cap would bring both back.

   Where no thread can be started (a pids cgroup's limit, RLIMIT_NPROC),
   the rule cannot hold: the thread says so on standard error, once
   until a thread can be started again, and answers the call itself.
   Until then a call may wait for another's fill, and a supervised FUSE
   server whose fallocate handler calls fallocate may wait for ever.

   A thread that has answered a call ends if FIRST others wait: a burst
   of calls leaves a thread for each call it had at once, and each
   waiting thread made every later call slower (a review's program: a
   call on tmpfs 15-23 us, 53-113 us after 100 fills at once); after the
   burst, each call ends one until FIRST wait.  Calls that come one at a
   time start and end none.  Fills run in processes of their own
   (apart.c), so no thread here waits behind another's page fault that
   blocks.  */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "supervise.h"

/* Threads started with the supervisor, and kept waiting once calls
   have come: the first call, and one coming while it is answered, find
   one waiting.  */
#define FIRST 2

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int idle;
/* Threads started that do not wait yet: they will, so they count as
   waiting when a thread that takes a call decides whether to start one
   (starting one takes a while, and threads then started three to ten
   times as many as calls were in flight).  */
static int starting;

static void *worker (void *);

/* Whether this thread, answering a call, already counts as waiting.  */
static __thread int replying;

/* Called just before a thread sends its reply: from then on it counts
   as waiting, for it waits for the next call right after, and its reply
   lets the caller make its next call, which would otherwise find none
   waiting and start a thread (twice as many threads as calls).  */
void
sv_pool_replying (void)
{
  pthread_mutex_lock (&mu);
  idle += !replying;
  replying = 1;
  pthread_mutex_unlock (&mu);
}

/* Whether the last start_worker failed, said on standard error.  */
static int stuck;

/* A thread that answers calls: 0, or pthread_create's error, said on
   standard error if SAY.  */
static int
start_worker (int say)
{
  pthread_attr_t a;
  pthread_t t;
  int err;

  pthread_mutex_lock (&mu);
  starting++;
  pthread_mutex_unlock (&mu);
  pthread_attr_init (&a);
  pthread_attr_setdetachstate (&a, PTHREAD_CREATE_DETACHED);
  err = pthread_create (&t, &a, worker, NULL);
  pthread_attr_destroy (&a);
  pthread_mutex_lock (&mu);
  if (err)
    {
      starting--;
      if (say && !stuck++)
	fprintf (stderr, "fallocate-shim: cannot start a thread (%s): calls "
		 "wait for one another until one can\n", strerror (err));
    }
  else
    stuck = 0;
  pthread_mutex_unlock (&mu);
  return err;
}

/* Whether every process under the filter is gone: Linux 6.6 and later
   then answer NOTIF_RECV at once, with ENOENT.  */
static int
hung_up (void)
{
  struct pollfd p = { .fd = listener, .events = 0 };

  return poll (&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

static void *
worker (void *arg)
{
  (void) arg;
  /* Signals are the main thread's (forward).  */
  sv_block (NULL);
  pthread_mutex_lock (&mu);
  starting--;
  idle++;
  for (;;)
    {
      struct seccomp_notif req;
      int r, err, last;

      pthread_mutex_unlock (&mu);
      memset (&req, 0, sizeof req);
      r = ioctl (listener, SECCOMP_IOCTL_NOTIF_RECV, &req);
      err = errno;
      pthread_mutex_lock (&mu);
      /* ENOENT: the caller went away before we took its call, or
	 everyone did.  A thread that goes on waiting stays counted.  */
      if (r < 0 && (err == EINTR || (err == ENOENT && !hung_up ())))
	continue;
      idle--;
      if (r < 0)
	break;
      last = idle == 0 && starting == 0;
      pthread_mutex_unlock (&mu);
      /* No other thread waits: one more, before answering (the pool's
	 rule, at the top of this file).  Two threads taking calls at once
	 may both start one: one too many, never one too few.  */
      if (last)
	start_worker (1);
      sv_answer (&req);
      pthread_mutex_lock (&mu);
      idle += !replying;
      replying = 0;
      if (idle - 1 >= FIRST)
	{
	  idle--;
	  break;
	}
    }
  pthread_mutex_unlock (&mu);
  return NULL;
}

/* The first threads: 0, or pthread_create's error.  */
int
sv_pool_start (void)
{
  int err = 0;

  for (int i = 0; i < FIRST && err == 0; i++)
    err = start_worker (0);
  return err;
}
