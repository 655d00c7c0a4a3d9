/* Calls of ours on the same file take turns.

   Two calls of ours on the same file at once, from two threads, would
   each see the other's zeros as someone else's and the file could end
   up longer than either asked.  They take turns, per file: a lock per
   stripe of inode numbers, so that calls on other files rarely wait.

   A call from a signal handler that interrupted a call of ours in the
   same thread, wherever in it (INSIDE counts them from the start of
   __fa_lock to the end of __fa_unlock), goes on at once, without a
   turn, as a call from another process would: it would wait for itself,
   or, two threads each interrupted by a handler that calls on the file
   the other is filling, for each other for ever.  A stripe's word is
   its holder's thread ID, 0 when free: taking it and naming the holder
   are one compare-and-swap, letting it go one store.  Nothing else is
   taken on the way, not even a pthread_once (a handler interrupting its
   first run waits for itself).  A child, however made (fork, a raw fork, clone),
   starts with every stripe free: they live in a page the kernel zeroes
   in a fork's child (below).  Where that page cannot be had, a child of
   fork() gets them free (pthread_atfork), and one of a raw fork or clone
   finds the holder missing from its thread group and takes the word
   over (but in a new pid namespace, where its own threads may have the
   holder's ID).  */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/futex.h>
#include "fa-file.h"

/* Counts the calls that have finished (__fa_unlock): one that finds it
   unchanged once it holds its lock knows that no call of ours changed
   the file since its check, and needs no second fstat.  */
static unsigned generation;

#define STRIPES 16
struct stripe
{
  int owner;			/* thread ID of the holder, or 0 */
  int waiters;			/* threads asleep on owner, or about to be */
};

/* The stripes where the page below cannot be had.  */
static struct stripe kept[STRIPES];

/* How many calls of ours this thread is inside, from the start of
   __fa_lock to the end of __fa_unlock: more than 0 in a handler that
   interrupted one, wherever (counting only the turns held left a gap on
   each side of taking and letting go, where two threads' handlers each
   waited for the other's turn for ever, and a handler interrupting a
   call that waited for its turn waited too).  */
static __thread int inside;

/* The thread's ID, asked once per thread (gettid is a system call: one
   per call cost make bench's 1-byte calls a tenth of their time), and
   the process's token (below) when it was asked; 0 until then.  */
static __thread int tid;
static __thread unsigned tid_token;

/* A page the kernel zeroes in the child of every fork, raw ones too
   (MADV_WIPEONFORK, Linux 4.14), holding the stripes and the process's
   token.  A child thus starts with every stripe free: one made by a
   raw clone into a new pid namespace found a stripe held by its
   parent's thread 2, took it as its own thread 2's, went on without a
   turn, and the next call on the file waited for ever.  A thread's kept
   ID is its own only where the page holds the token it was kept with.  A raw fork runs no atfork handler, and a child's
   second thread took the lock its first held, named by the parent's
   ID, as abandoned (t-rawfork).  Tokens are counted in TOKENS, which a
   child inherits, so that its token is none its parent's threads kept:
   a word saying only whether the process had forked was set again by a
   new thread's call, and one holding the process's ID matched in a new
   pid namespace, where a child may have its parent's ID (t-rawfork).
   Mapped at the first call, not when the library is loaded (two system
   calls at every program's start: a hundredth of make bench's case 6).
   Where it cannot be had (UNFORKABLE), the ID is asked each time.  */
struct unforked
{
  unsigned token;
  struct stripe stripe[STRIPES];
};
static struct unforked *unforked;
static unsigned tokens;

/* UNFORKED once the page cannot be had: one answer for every thread
   (a thread that could not map it used KEPT while another took the
   page's stripes, and both took one file's turn).  */
#define NOPAGE ((struct unforked *) 1)

#ifndef MADV_WIPEONFORK
# define MADV_WIPEONFORK 18
#endif

/* The page, or NULL.  Two threads, or a handler and the thread it
   interrupted, may map one each, or fail to: the first answer
   published is every thread's.  */
static struct unforked *
fork_page (void)
{
  struct unforked *w = __atomic_load_n (&unforked, __ATOMIC_ACQUIRE);
  struct unforked *none = NULL;
  size_t page;

  if (w)
    return w == NOPAGE ? NULL : w;
  page = (size_t) sysconf (_SC_PAGESIZE);
  w = mmap (NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
  if (w != MAP_FAILED && madvise (w, page, MADV_WIPEONFORK) < 0)
    {
      munmap (w, page);
      w = MAP_FAILED;
    }
  if (w == MAP_FAILED)
    w = NOPAGE;
  if (!__atomic_compare_exchange_n (&unforked, &none, w, 0, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE))
    {
      if (w != NOPAGE)
	munmap (w, page);
      w = none;
    }
  return w == NOPAGE ? NULL : w;
}

/* The process's token, handed out by the first call since the process
   began or forked.  */
static unsigned
token (unsigned *w)
{
  unsigned t = __atomic_load_n (w, __ATOMIC_ACQUIRE), zero = 0;

  while (t == 0)
    {
      t = __atomic_add_fetch (&tokens, 1, __ATOMIC_RELAXED);
      if (t != 0 && !__atomic_compare_exchange_n (w, &zero, t, 0,
						  __ATOMIC_ACQ_REL,
						  __ATOMIC_ACQUIRE))
	t = zero;
    }
  return t;
}

/* The calling thread's ID.  */
static int
self_id (void)
{
  struct unforked *u = fork_page ();
  unsigned *w = u ? &u->token : NULL;

  if (tid && w && __atomic_load_n (w, __ATOMIC_ACQUIRE) == tid_token)
    return tid;
  unsigned t = w ? token (w) : 0;
  int id = (int) syscall (SYS_gettid);

  /* The ID before the token: a handler that interrupts between the two
     finds the token not yet its own and asks again.  */
  tid = id;
  __atomic_signal_fence (__ATOMIC_SEQ_CST);
  tid_token = t;
  return id;
}

/* Whether thread HELD is gone from this process (tgkill's ESRCH).  */
static int
gone_holder (int held)
{
  int saved = errno, r;

  r = syscall (SYS_tgkill, getpid (), held, 0) < 0 && errno == ESRCH;
  errno = saved;
  return r;
}

/* The stripes: in the page, once it is had, else KEPT, for good.  */
static struct stripe *
stripes (void)
{
  struct unforked *u = fork_page ();

  return u ? u->stripe : kept;
}

/* Not INSIDE: a fork from a handler that interrupted a call of ours
   leaves the child inside it, and the call's __fa_unlock counts it out
   (set to 0 here, it went to -1, and every later call of the thread
   went on without a turn: t-rawfork case 6).  */
static void
forked (void)
{
  memset (kept, 0, sizeof kept);
  tid = 0;
}

/* When the library is loaded: pthread_atfork at the first call would
   need a pthread_once, which a signal handler can interrupt.  */
static void __attribute__ ((constructor))
init (void)
{
  pthread_atfork (NULL, NULL, forked);
}

void
__fa_lock (struct fa_file *f)
{
  struct stripe *stripe;
  int i = (int) (f->st.st_ino % STRIPES), self, held = 0;

  f->locked = 0;
  /* Counted before anything else, so that a handler interrupting from
     here on finds it.  */
  if (inside++)
    return;
  __atomic_signal_fence (__ATOMIC_SEQ_CST);
  stripe = stripes ();
  self = self_id ();
  while (!__atomic_compare_exchange_n (&stripe[i].owner, &held, self, 0,
				       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
    {
      if (held == self)
	return;
      if (gone_holder (held))
	{
	  __atomic_compare_exchange_n (&stripe[i].owner, &held, 0, 0,
				       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	  held = 0;
	  continue;
	}
      /* Asleep only while the word still names HELD; __fa_unlock wakes
	 a sleeper it can see, and one it cannot see finds the word
	 changed and does not sleep.  */
      __atomic_add_fetch (&stripe[i].waiters, 1, __ATOMIC_SEQ_CST);
      syscall (SYS_futex, &stripe[i].owner, FUTEX_WAIT_PRIVATE, held,
	       NULL, NULL, 0);
      __atomic_sub_fetch (&stripe[i].waiters, 1, __ATOMIC_SEQ_CST);
      held = 0;
    }
  f->turns = stripe;
  f->locked = 1;
}

/* Nonzero if calls of ours may have changed the file since F's check.  */
int
__fa_stale (const struct fa_file *f)
{
  return __atomic_load_n (&generation, __ATOMIC_ACQUIRE) != f->gen;
}

void
__fa_unlock (struct fa_file *f)
{
  int i = (int) (f->st.st_ino % STRIPES);

  __atomic_add_fetch (&generation, 1, __ATOMIC_RELEASE);
  if (f->locked)
    {
      /* Those the lock used: a thread whose mapping of the page failed
	 while another's did not used KEPT, once.  */
      struct stripe *stripe = f->turns;

      __atomic_store_n (&stripe[i].owner, 0, __ATOMIC_SEQ_CST);
      if (__atomic_load_n (&stripe[i].waiters, __ATOMIC_SEQ_CST))
	syscall (SYS_futex, &stripe[i].owner, FUTEX_WAKE_PRIVATE, 1,
		 NULL, NULL, 0);
    }
  /* Counted out only once the turn is let go.  */
  __atomic_signal_fence (__ATOMIC_SEQ_CST);
  inside--;
}

/* Read by __fa_check into F->gen.  */
unsigned
__fa_generation (void)
{
  return __atomic_load_n (&generation, __ATOMIC_ACQUIRE);
}
