/* Calls of ours on the same file take turns.

   Two calls of ours on the same file at once, from two threads, would
   each see the other's zeros as someone else's and the file could end
   up longer than either asked.  They take turns per file (device and
   inode number): a call never waits for the turn of another file,
   however long that one's fill (a stopped FUSE server, a frozen
   filesystem).

   A turn is a slot of a table naming a file (its key) and its holder's
   thread ID (0 when free).  A key is written only by a thread that
   holds the slot and the table's own lock, and only when no other slot
   has it: a file has one slot at most, its key left in place when let
   go.  A thread calling again on the file of its last call takes that
   slot's turn with one compare-and-swap, no lock taken, no signal
   blocked (make bench's case 7: a thread's calls on one file), and
   checks the key once it holds the slot.  Any other call takes the
   table's lock, with every signal blocked, only to look the file up and
   take its slot or a free one: no fill, no system call but a futex wait
   for that lock, no handler (whose call would go on without a turn and
   keep the lock for its whole fill).  A call whose file's slot is held
   sleeps on that slot until its holder lets it go.  Only when more
   calls hold turns than the table has slots (REGION_SLOTS: some ten
   thousand; KEPT where the table cannot be mapped) does a call wait for
   one on another file.

   A call from a signal handler that interrupted a call of ours in the
   same thread, wherever in it (INSIDE counts them from the start of
   __fa_lock to the end of __fa_unlock), goes on at once, without a
   turn, as a call from another process would: it would wait for itself
   (for the turn or the table's lock that its thread holds), or, two
   threads each interrupted by a handler that calls on the file the
   other is filling, for each other for ever.  Nothing else is taken on
   the way, not even a pthread_once (a handler interrupting its first
   run waits for itself).

   A child, however made (fork, a raw fork, clone without CLONE_VM),
   starts with every turn free: the table lives in memory the kernel zeroes in a fork's
   child (below).  A call that a fork from a handler left running in
   the child lets go of nothing there: its turn was the parent's.
   Where that memory cannot be had, a child of fork() gets the turns
   free (pthread_atfork), and one of a raw fork or clone finds the
   holder missing from its thread group and takes the turn over (but in
   a new pid namespace, where its own threads may have the holder's
   ID); the parent's sleepers stay counted on their slots there, which
   are then never free: a call in that child may wait for a fill of
   another file whose slot is the same modulo KEPT.  A child that shares our memory (CLONE_VM without CLONE_THREAD,
   as vfork's) shares the table and the cloning thread's ID, and must
   not call, as it may call nothing but execve and _exit after vfork.  */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/futex.h>
#include "fa-file.h"

/* Counts the calls that have finished (__fa_unlock): one that finds it
   unchanged once it holds its turn knows that no call of ours changed
   the file since its check, and needs no second fstat.  */
static unsigned generation;

struct turn
{
  int owner;			/* thread ID of the holder, or 0 */
  int waiters;			/* threads asleep on owner, or about to be */
};

struct slot
{
  struct turn turn;
  unsigned key[4];		/* the file's device and inode number in
				   32-bit words (KEYS), if keyed: a 32-bit
				   system may have no 64-bit atomics */
  int keyed;
};

#define KEPT 64
struct table
{
  unsigned token;		/* the process's (below) */
  unsigned hi;			/* no slot from here on is in use */
  struct turn lock;		/* held to look up and take slots */
  struct slot slot[KEPT];	/* REGION_SLOTS of them in the region */
};

/* Mapped once, at the first call (not when the library is loaded: two
   system calls at every program's start cost a hundredth of make
   bench's case 6), and zeroed by the kernel in the child of every fork,
   raw ones too (MADV_WIPEONFORK, Linux 4.14).  Pages are used only as
   slots are: a process that never has two calls at once touches one.  */
#define REGION (256 * 1024)
#define REGION_SLOTS ((REGION - offsetof (struct table, slot)) \
		      / sizeof (struct slot))
static struct table *region;

/* The table where the region cannot be had (NOPAGE), for good: one
   answer for every thread (a thread that could not map it used KEPT
   while another used the region, and both took one file's turn).  */
static struct table kept;
#define NOPAGE ((struct table *) 1)

#ifndef MADV_WIPEONFORK
# define MADV_WIPEONFORK 18
#endif

/* How many calls of ours this thread is inside, from the start of
   __fa_lock to the end of __fa_unlock: more than 0 in a handler that
   interrupted one, wherever.  */
static FA_TLS int inside;

/* The thread's ID, asked once per thread (gettid is a system call: one
   per call cost make bench's 1-byte calls a tenth of their time), and
   the process's token when it was asked; 0 until then.  The token
   tells whether the ID is this process's: the region's copy is zeroed
   in a fork's child, which then hands out a new one from TOKENS (which
   it inherits, so none its parent's threads kept).  Where the region
   cannot be had, the ID is asked each time.  */
static FA_TLS int tid;
static FA_TLS unsigned tid_token;
static unsigned tokens;

/* The slot of the thread's last turn, and the process's token then: a
   fork's child has a new token and its own, zeroed, table.  */
static FA_TLS struct slot *last;
static FA_TLS unsigned last_token;

/* The table, at the first call: the region mapped, or KEPT.  Two
   threads, or a handler and the thread it interrupted, may map one each,
   or fail to: the first answer published is every thread's.  */
static struct table * __attribute__ ((noinline))
mapped (void)
{
  struct table *w, *none = NULL;

  w = mmap (NULL, REGION, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (w != MAP_FAILED && madvise (w, REGION, MADV_WIPEONFORK) < 0)
    {
      munmap (w, REGION);
      w = MAP_FAILED;
    }
  if (w == MAP_FAILED)
    w = NOPAGE;
  if (!__atomic_compare_exchange_n (&region, &none, w, 0, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE))
    {
      if (w != NOPAGE)
	munmap (w, REGION);
      w = none;
    }
  return w == NOPAGE ? &kept : w;
}

/* The table (mapped).  */
static inline struct table *
table (void)
{
  struct table *w = __atomic_load_n (&region, __ATOMIC_ACQUIRE);

  if (w)
    return w == NOPAGE ? &kept : w;
  return mapped ();
}

/* The process's token in T, handed out by the first call since the
   process began or forked; 0 where T is not zeroed in a child.  */
static unsigned
token (struct table *t)
{
  unsigned v, zero = 0;

  if (t == &kept)
    return 0;
  v = __atomic_load_n (&t->token, __ATOMIC_ACQUIRE);
  while (v == 0)
    {
      v = __atomic_add_fetch (&tokens, 1, __ATOMIC_RELAXED);
      if (v != 0 && !__atomic_compare_exchange_n (&t->token, &zero, v, 0,
						  __ATOMIC_ACQ_REL,
						  __ATOMIC_ACQUIRE))
	v = zero;
    }
  return v;
}

/* The calling thread's ID.  */
static int
self_id (struct table *t)
{
  if (tid && t != &kept
      && __atomic_load_n (&t->token, __ATOMIC_ACQUIRE) == tid_token)
    return tid;
  unsigned v = token (t);
  int id = (int) syscall (SYS_gettid);

  /* The ID before the token: a handler that interrupts between the two
     finds the token not yet its own and asks again.  */
  tid = id;
  __atomic_signal_fence (__ATOMIC_SEQ_CST);
  tid_token = v;
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

/* T let go, if SELF still holds it; its sleepers woken, all of them
   (each looks its file up again).  */
static void
let_go (struct turn *t, int self)
{
  if (__atomic_compare_exchange_n (&t->owner, &self, 0, 0, __ATOMIC_SEQ_CST,
				   __ATOMIC_SEQ_CST)
      && __atomic_load_n (&t->waiters, __ATOMIC_SEQ_CST))
    syscall (SYS_futex, &t->owner, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL,
	     0);
}

/* Asleep while T names HELD, or T let go for HELD if it is gone; the
   caller counted itself among T's waiters, and is counted out.  */
static void
wait_turn (struct turn *t, int held)
{
  if (gone_holder (held))
    let_go (t, held);
  else
    syscall (SYS_futex, &t->owner, FUTEX_WAIT_PRIVATE, held, NULL, NULL, 0);
  __atomic_sub_fetch (&t->waiters, 1, __ATOMIC_SEQ_CST);
}

/* The table's lock, taken by SELF (already its: a thread of a raw fork
   into a new pid namespace with the ID of a holder in the parent).  */
static void
take (struct turn *t, int self)
{
  int held = 0;

  while (!__atomic_compare_exchange_n (&t->owner, &held, self, 0,
				       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)
	 && held != self)
    {
      __atomic_add_fetch (&t->waiters, 1, __ATOMIC_SEQ_CST);
      wait_turn (t, held);
      held = 0;
    }
}

static int
free_slot (const struct slot *s)
{
  return __atomic_load_n (&s->turn.owner, __ATOMIC_SEQ_CST) == 0
	 && __atomic_load_n (&s->turn.waiters, __ATOMIC_SEQ_CST) == 0;
}

/* F's device and inode number in the words of a slot's key.  */
static void
keys (const struct fa_file *f, unsigned k[4])
{
  uint64_t dev = (uint64_t) f->st.st_dev, ino = (uint64_t) f->st.st_ino;

  k[0] = (unsigned) dev;
  k[1] = (unsigned) (dev >> 32);
  k[2] = (unsigned) ino;
  k[3] = (unsigned) (ino >> 32);
}

/* Whether S's key is K, a file's keys (all four words compared, no
   branch between them: make bench's case 7 runs it twice a call).  */
static int
keyed (const struct slot *s, const unsigned k[4])
{
  return __atomic_load_n (&s->keyed, __ATOMIC_RELAXED)
	 && ((__atomic_load_n (&s->key[0], __ATOMIC_RELAXED) ^ k[0])
	     | (__atomic_load_n (&s->key[1], __ATOMIC_RELAXED) ^ k[1])
	     | (__atomic_load_n (&s->key[2], __ATOMIC_RELAXED) ^ k[2])
	     | (__atomic_load_n (&s->key[3], __ATOMIC_RELAXED) ^ k[3])) == 0;
}

/* S's key set to K, a file's keys (NULL: none), by the holder of S
   and of the table's lock.  */
static void
key (struct slot *s, const unsigned k[4])
{
  __atomic_store_n (&s->keyed, 0, __ATOMIC_RELAXED);
  if (!k)
    return;
  for (int i = 0; i < 4; i++)
    __atomic_store_n (&s->key[i], k[i], __ATOMIC_RELAXED);
  __atomic_store_n (&s->keyed, 1, __ATOMIC_RELAXED);
}

/* 0 if SELF took S's turn, else its holder.  Not inlined: a debugger
   can stop a thread just before it claims a slot (t-cross).  */
static int __attribute__ ((noinline))
claim (struct slot *s, int self)
{
  int held = 0;

  __atomic_compare_exchange_n (&s->turn.owner, &held, self, 0,
			       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return held;
}

/* Under T's lock: F's file's slot, for SELF to take or wait for; else
   a free one, none that sleepers may still take for their file's (a
   sleeper on a slot taken again by its last holder would sleep through
   an unrelated file's fill), taken by SELF (*GOT set): one taken for
   free but held by the time SELF claims it (a thread calling again on
   its last file, without the lock) is passed over, never waited for;
   else, with every slot in use, one held for another.  Free slots past
   the last in use lose their keys, so that none is left out of the
   search with a key.  */
static struct slot *
look_up (struct table *t, const struct fa_file *f, const unsigned k[4],
	 int self, int *got)
{
  unsigned cap = t == &kept ? KEPT : REGION_SLOTS, i;
  struct slot *s = t->slot;

  *got = 0;
  for (i = 0; i < t->hi; i++)
    if (keyed (&s[i], k))
      return &s[i];
  while (t->hi > 0 && free_slot (&s[t->hi - 1])
	 && claim (&s[t->hi - 1], self) == 0)
    {
      key (&s[--t->hi], NULL);
      let_go (&s[t->hi].turn, self);
    }
  *got = 1;
  for (i = 0; i < t->hi; i++)
    if (free_slot (&s[i]) && claim (&s[i], self) == 0)
      return &s[i];
  while (t->hi < cap)
    if (claim (&s[t->hi++], self) == 0)
      return &s[t->hi - 1];
  *got = 0;
  return &s[f->st.st_ino % cap];
}

/* Not INSIDE: a fork from a handler that interrupted a call of ours
   leaves the child inside it, and that call's __fa_unlock counts it
   out.  */
static void
forked (void)
{
  memset (&kept, 0, sizeof kept);
  tid = 0;
  last = NULL;
}

/* When the library is loaded: pthread_atfork at the first call would
   need a pthread_once, which a signal handler can interrupt.  */
static void __attribute__ ((constructor))
init (void)
{
  pthread_atfork (NULL, NULL, forked);
}

/* F's turn, taken by SELF from S.  */
static void
took (struct fa_file *f, struct table *t, struct slot *s, int self)
{
  f->turn = s;
  f->self = self;
  f->token = token (t);
  if (t != &kept)
    {
      last = s;
      last_token = f->token;
    }
}

/* The kernel's sigset: _NSIG bits (64, or 128 on MIPS).  */
#define SIGSET_BYTES (_NSIG / 8)

void
__fa_sigblock (sigset_t *old)
{
  sigset_t all;

  sigfillset (&all);
  syscall (SYS_rt_sigprocmask, SIG_BLOCK, &all, old, SIGSET_BYTES);
}

void
__fa_sigrestore (const sigset_t *old)
{
  syscall (SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, SIGSET_BYTES);
}

void
__fa_lock (struct fa_file *f)
{
  struct table *t;
  struct slot *s;
  int self, held, got;
  unsigned k[4];

  f->turn = NULL;
  /* Counted before anything else, so that a handler interrupting from
     here on finds it.  */
  if (inside++)
    return;
  __atomic_signal_fence (__ATOMIC_SEQ_CST);
  t = table ();
  self = self_id (t);
  keys (f, k);
  s = last;
  if (s && t != &kept && last_token == token (t) && keyed (s, k)
      && claim (s, self) == 0)
    {
      /* The key is changed only by its slot's holder: now ours, F's
	 still, or F's file has another slot (or none) by now.  */
      if (keyed (s, k))
	{
	  took (f, t, s, self);
	  return;
	}
      let_go (&s->turn, self);
    }
  do
    {
      sigset_t old;

      /* No handler runs while this thread holds the table's lock: its
	 call would go on, without a turn, with the lock held, and every
	 call on every file would wait for its fill.  */
      __fa_sigblock (&old);
      take (&t->lock, self);
      s = look_up (t, f, k, self, &got);
      held = got ? 0 : claim (s, self);
      if (held == 0)
	{
	  if (!keyed (s, k))
	    key (s, k);
	  took (f, t, s, self);
	}
      else if (held != self)
	__atomic_add_fetch (&s->turn.waiters, 1, __ATOMIC_SEQ_CST);
      let_go (&t->lock, self);
      __fa_sigrestore (&old);
      if (held != 0 && held != self)
	wait_turn (&s->turn, held);
    }
  while (held != 0 && held != self);
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
  __atomic_add_fetch (&generation, 1, __ATOMIC_RELEASE);
  /* Not if the process forked since (a new token): the turn was the
     parent's, and the slot may be a thread's of the child's.  */
  if (f->turn)
    {
      struct slot *s = f->turn;
      struct table *t = table ();

      if (t == &kept || __atomic_load_n (&t->token, __ATOMIC_ACQUIRE)
	  == f->token)
	let_go (&s->turn, f->self);
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
