/* fallocate-supervise's threads: the pool that waits for calls.

   The pool's rule: each thread waits for a notification and answers it
   (sv_answer); one that takes a call and leaves no other waiting, nor
   one started and about to wait, starts another before it answers.  So there is always a thread waiting for
   the next call, whatever the number in flight: a call never waits for
   another call's fill, and a supervised program whose answer needs
   another of its calls answered (a FUSE server under the filter, whose
   fallocate handler calls fallocate) never deadlocks.  There is no cap:
   a cap would bring both back.

   The fallback's mapping way holds this process's mmap lock for reading
   while it faults a window in: anything that maps memory meanwhile (a
   thread stack from mmap, first of all) waits for that, and every page
   fault of every thread waits behind it.  So the threads' stacks are
   carved out of one mapping made at the start, their pages touched when
   they start, and threads never end (as many as calls were ever
   answered at once, and one); all use one malloc arena (each new one
   would be mapped).  So starting a thread maps nothing while fewer than
   STACKS have been started, and a fill holds up only what maps memory:
   another fill's window, and past STACKS threads the start of one.  */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "supervise.h"

/* Thread stacks mapped at the start; more threads get theirs from
   pthread_create.  */
#define STACKS 256
#define STACK (256 << 10)
#define TOUCHED (32 << 10)
/* Threads started with the supervisor: the first call, and one coming
   while it is answered, find one waiting.  */
#define FIRST 2

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t quiet = PTHREAD_COND_INITIALIZER;
static int idle, busy, stacks;
/* Threads started that do not wait yet: they will, so they count as
   waiting when a thread that takes a call decides whether to start one
   (touching its stack takes a while, and threads then started three to
   ten times as many as calls were in flight).  */
static int starting;
static char *stack_area;

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

/* A thread that answers calls, on a stack of STACK_AREA while there is
   one left.  */
static int
start_worker (void)
{
  pthread_attr_t a;
  pthread_t t;
  int err, slot;

  pthread_mutex_lock (&mu);
  slot = stack_area != NULL && stacks < STACKS ? stacks++ : -1;
  starting++;
  pthread_mutex_unlock (&mu);
  pthread_attr_init (&a);
  pthread_attr_setdetachstate (&a, PTHREAD_CREATE_DETACHED);
  if (slot >= 0)
    pthread_attr_setstack (&a, stack_area + (size_t) slot * STACK, STACK);
  err = pthread_create (&t, &a, worker, NULL);
  pthread_attr_destroy (&a);
  if (err)
    {
      pthread_mutex_lock (&mu);
      starting--;
      pthread_mutex_unlock (&mu);
    }
  return err;
}

/* The stacks, each with a guard page below it; NULL if they cannot be
   had (then pthread_create maps each).  */
static void
map_stacks (void)
{
  long page = sysconf (_SC_PAGESIZE);
  char *p = mmap (NULL, (size_t) STACKS * STACK, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
		  -1, 0);

  if (p == MAP_FAILED)
    return;
  for (int i = 0; i < STACKS; i++)
    if (mprotect (p + (size_t) i * STACK, (size_t) page, PROT_NONE) < 0)
      {
	munmap (p, (size_t) STACKS * STACK);
	return;
      }
  stack_area = p;
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
  sigset_t all;
  volatile char touch[TOUCHED];

  (void) arg;
  /* The pages of the stack that answering uses, faulted in now rather
     than while a fill holds the mmap lock.  */
  for (size_t i = 0; i < sizeof touch; i += 1024)
    touch[i] = 0;
  /* Signals are the main thread's (forward).  */
  sigfillset (&all);
  pthread_sigmask (SIG_BLOCK, &all, NULL);
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
      busy++;
      last = idle == 0 && starting == 0;
      pthread_mutex_unlock (&mu);
      /* No other thread waits: one more, before answering (the pool's
	 rule, at the top of this file).  Two threads taking calls at once
	 may both start one: one too many, never one too few.  */
      if (last)
	start_worker ();
      sv_answer (&req);
      pthread_mutex_lock (&mu);
      if (--busy == 0)
	pthread_cond_broadcast (&quiet);
      idle += !replying;
      replying = 0;
    }
  pthread_mutex_unlock (&mu);
  return NULL;
}

/* The stacks, the arena and the first threads: 0, or pthread_create's
   error.  */
int
sv_pool_start (void)
{
  int err = 0;

  map_stacks ();
#ifdef M_ARENA_MAX		/* glibc's; musl's malloc has no arenas */
  mallopt (M_ARENA_MAX, 1);
#endif
  for (int i = 0; i < FIRST && err == 0; i++)
    err = start_worker ();
  return err;
}

/* Once no call is being answered.  */
void
sv_pool_quiet (void)
{
  pthread_mutex_lock (&mu);
  while (busy > 0)
    pthread_cond_wait (&quiet, &mu);
  pthread_mutex_unlock (&mu);
}
