/* t-rawfork DIR [CASE]: the per-file turns of fa-lock.c in children
   made by fork, raw forks and clones (syscall (SYS_fork): no atfork
   handler runs), under fa-seccomp ENOSYS, so that posix_fallocate
   takes the fallback, which takes turns.  In the child, the main
   thread fills 1 GiB of a file; 50 ms into it a second thread asks for
   4 KiB past its end, which must wait its turn: PASS if it returns
   after the main thread's call lets the turn go, FAIL if 20 ms or more
   before (it took the turn as its own or as abandoned).  Ways to make
   the child: CASE 0, a raw fork by a parent that never called; 1, fork
   (); 2, a raw fork after a call of the parent's; 3, the same with a
   thread made in the child calling first; 6, fork () from a signal
   handler that interrupted a call; 7, as 6 with a fill by a new thread
   of the child's during the interrupted call (above fork_in_handler).
   Only when asked, as process 1 of a pid namespace: CASE 4, a raw
   clone into a new pid namespace from a thread that called, where the
   child is process 1 again and its new threads get the IDs the
   parent's had; CASE 5, the same while another thread holds the
   file's turn.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

#define BIG (1LL << 30)

static int fd;
static volatile int started;
static long t_small, t_big;

static long
now_us (void)
{
  struct timespec t;

  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000L + t.tv_nsec / 1000;
}

static void *
small (void *arg)
{
  struct timespec ms50 = { 0, 50 * 1000 * 1000 };

  (void) arg;
  while (!__atomic_load_n (&started, __ATOMIC_SEQ_CST))
    ;
  nanosleep (&ms50, NULL);
  int r = posix_fallocate64 (fd, BIG + 4096, 4096);
  t_small = now_us ();
  return (void *) (long) r;
}

/* A thread made after the fork, whose call comes first.  */
static void *
prime (void *arg)
{
  (void) arg;
  return (void *) (long) posix_fallocate64 (fd, BIG + 8192, 4096);
}

/* In the child: with FIRST, a new thread's call first; then the two
   calls; exit 0 if the small one waited, 1 if it returned first, 2 on
   an error.  */
static int
child (int first)
{
  pthread_t t;
  void *r;

  if (first && (pthread_create (&t, NULL, prime, NULL) != 0
		|| pthread_join (t, &r) != 0 || r != NULL))
    return 2;
  if (pthread_create (&t, NULL, small, NULL) != 0)
    return 2;
  __atomic_store_n (&started, 1, __ATOMIC_SEQ_CST);
  int big = posix_fallocate64 (fd, 0, BIG);
  t_big = now_us ();
  pthread_join (t, &r);
  printf ("# %s: big %d, small %ld, small returned %ld us %s the big one\n",
	  "child", big, (long) r, labs (t_big - t_small),
	  t_small < t_big ? "before" : "after");
  fflush (stdout);
  if (big || r)
    return 2;
  /* The big call's last steps after it lets the lock go (its return,
     the clock) take microseconds; a call that did not wait returns some
     100 ms before.  */
  return t_small < t_big - 20000 ? 1 : 0;
}

/* Case 4: in a thread that has called, a raw clone into a new pid
   namespace; the process is 1 in its own, and so is the child, whose
   new threads get the IDs this one's had.  */
static void *
forker (void *arg)
{
  int *st = arg;

  if (posix_fallocate64 (fd, 0, 4096) != 0)
    return (void *) 1;
  fflush (stdout);
  pid_t pid = (pid_t) syscall (SYS_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL,
			       NULL, NULL);
  if (pid == 0)
    _exit (child (1));
  return (void *) (long) (pid < 0 || waitpid (pid, st, 0) != pid);
}

/* The verdict on a child's status ST, RAN 0 if it could not be made,
   was killed after 60 s, or could not be reaped: exit 0 if the second
   thread's call waited (child), 1 if not, 2 on an error.  */
static void
verdict (const char *how, int ran, int st)
{
  if (!ran || !WIFEXITED (st) || WEXITSTATUS (st) == 2)
    t_ok (0, "%s: the child's calls (status %#x%s)", how, st,
	  ran ? "" : ", not run to their end");
  else
    t_ok (WEXITSTATUS (st) == 0, "%s: a second thread's call on the same "
	  "file waits for the first's", how);
}

/* Case 5: a thread of ours holds the file's turn (a call of BIG) while
   the main thread makes a raw clone into a new pid namespace, whose
   child's threads get the IDs ours had.  */
static void *
holder (void *arg)
{
  (void) arg;
  return (void *) (long) posix_fallocate64 (fd, 0, BIG);
}

/* The child PID's status into *ST within 60 s, else killed: 0, or -1
   if it had to be killed.  */
static int
reap (pid_t pid, int *st)
{
  struct timespec ms10 = { 0, 10 * 1000 * 1000 };

  for (int i = 0; i < 6000; i++)
    {
      pid_t r = waitpid (pid, st, WNOHANG);
      if (r == pid)
	return 0;
      if (r < 0)
	return -1;
      nanosleep (&ms10, NULL);
    }
  kill (pid, SIGKILL);
  waitpid (pid, st, 0);
  return -1;
}

static void
held_across (const char *dir, const char *how)
{
  char path[4096];
  struct timespec ms100 = { 0, 100 * 1000 * 1000 };
  pthread_t t;
  int st = 0;

  fd = t_create (dir, "rawfork", path, sizeof path);
  if (pthread_create (&t, NULL, holder, NULL) != 0)
    {
      t_ok (0, "%s: a thread", how);
      return;
    }
  nanosleep (&ms100, NULL);
  fflush (stdout);
  pid_t pid = (pid_t) syscall (SYS_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL,
			       NULL, NULL);
  if (pid == 0)
    _exit (child (0));
  int hung = pid < 0 || reap (pid, &st) < 0;
  pthread_join (t, NULL);
  verdict (how, !hung, st);
  close (fd);
  unlink (path);
}

/* Cases 6 and 7: fork () from a signal handler that interrupted a
   call of ours, once the call has begun to fill.  Case 6: the child,
   once the interrupted call is over, must still take turns.  Case 7:
   in the child, the handler starts a thread filling 2 GiB more of the
   file; once the interrupted call is over, a third thread's 4 KiB call
   on the file must wait for that fill (the interrupted call let go of
   the second thread's turn: it was the parent's it had taken).  */
static pid_t parent_pid, handler_child;
static volatile sig_atomic_t in_call, forked_inside, clobber;
static pthread_t main_thread;
static pthread_t second, third;
static volatile int call_over;
static long second_end, third_start, third_end;

static void *
second_fill (void *arg)
{
  (void) arg;
  long r = posix_fallocate64 (fd, BIG, 2 * BIG);
  second_end = now_us ();
  return (void *) r;
}

static void *
third_call (void *arg)
{
  struct timespec ms5 = { 0, 5 * 1000 * 1000 };

  (void) arg;
  while (!__atomic_load_n (&call_over, __ATOMIC_SEQ_CST))
    nanosleep (&ms5, NULL);
  nanosleep (&ms5, NULL);
  third_start = now_us ();
  long r = posix_fallocate64 (fd, 4 * BIG, 4096);
  third_end = now_us ();
  return (void *) r;
}

static void
on_usr1 (int sig)
{
  (void) sig;
  forked_inside = in_call;
  pid_t p = fork ();
  if (p > 0)
    handler_child = p;
  else if (p == 0 && clobber
	   && (pthread_create (&second, NULL, second_fill, NULL) != 0
	       || pthread_create (&third, NULL, third_call, NULL) != 0))
    _exit (2);
}

/* The signal, once the call has begun to fill.  */
static void *
kicker (void *arg)
{
  struct timespec us100 = { 0, 100 * 1000 };

  (void) arg;
  while (in_call && t_alloc (fd) == 0)
    nanosleep (&us100, NULL);
  if (in_call)
    pthread_kill (main_thread, SIGUSR1);
  return NULL;
}

/* Case 7's child, once the interrupted call is over: exit 0 if the
   third thread's call waited for the second's, 1 if not, 2 on an
   error.  */
static int
clobbered (int r)
{
  void *r2, *r3;

  __atomic_store_n (&call_over, 1, __ATOMIC_SEQ_CST);
  pthread_join (second, &r2);
  pthread_join (third, &r3);
  printf ("# child: the interrupted call %d, the second %ld, the third "
	  "%ld, which returned %ld us %s the second\n", r, (long) r2,
	  (long) r3, labs (second_end - third_end),
	  third_end < second_end ? "before" : "after");
  fflush (stdout);
  if (r2 || r3)
    return 2;
  /* Its clock read after the call lags the return a little.  */
  return third_end - third_start >= (second_end - third_start) * 4 / 5
	 ? 0 : 1;
}

static void
fork_in_handler (const char *dir, const char *how, int seven)
{
  char path[4096];
  struct sigaction sa;
  pthread_t t;
  int st = 0;

  fd = t_create (dir, "rawfork", path, sizeof path);
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction (SIGUSR1, &sa, NULL);
  parent_pid = getpid ();
  main_thread = pthread_self ();
  clobber = seven;
  fflush (stdout);
  in_call = 1;
  pthread_create (&t, NULL, kicker, NULL);
  int r = posix_fallocate64 (fd, 0, BIG);
  in_call = 0;
  /* The child, once the interrupted call is over.  */
  if (getpid () != parent_pid && seven)
    _exit (clobbered (r));
  if (getpid () != parent_pid)
    {
      char path2[4096];

      fd = t_create (dir, "rawfork-child", path2, sizeof path2);
      int code = r ? 2 : child (0);
      unlink (path2);
      _exit (code);
    }
  pthread_join (t, NULL);
  if (!forked_inside || handler_child <= 0)
    t_unsupported ("%s: the call ended before the signal", how);
  else
    {
      int ran = reap (handler_child, &st) == 0;
      verdict (how, ran, st);
    }
  signal (SIGUSR1, SIG_DFL);
  close (fd);
  unlink (path);
}

static void
one (const char *dir, const char *how, int raw, int cache, int first)
{
  char path[4096];
  int st = 0;

  fd = t_create (dir, "rawfork", path, sizeof path);
  if (raw == 2)
    {
      pthread_t t;
      void *bad = (void *) 1;

      st = 0;
      if (pthread_create (&t, NULL, forker, &st) == 0)
	pthread_join (t, &bad);
      verdict (how, !bad, st);
      close (fd);
      unlink (path);
      return;
    }
  if (cache && posix_fallocate64 (fd, 0, 4096) != 0)
    t_ok (0, "%s: the parent's call", how);
  fflush (stdout);
  pid_t pid = raw ? (pid_t) syscall (SYS_fork) : fork ();
  if (pid == 0)
    _exit (child (first));
  int ran = pid > 0 && waitpid (pid, &st, 0) == pid;
  verdict (how, ran, st);
  close (fd);
  unlink (path);
}

int
main (int argc, char **argv)
{
  if (argc != 2 && argc != 3)
    {
      fprintf (stderr, "usage: t-rawfork DIR [0|1|2|3|4|5|6|7]\n");
      return 2;
    }
  if (!t_filtered ())
    {
      t_unsupported ("not under fa-seccomp ENOSYS: the kernel's fallocate "
		     "takes no lock of ours");
      return t_done ();
    }
  /* First: no call made in this process yet.  CASE: that one alone.  */
  int only = argc == 3 ? atoi (argv[2]) : -1;
  if (only < 0 || only == 0)
    one (argv[1], "raw fork, no ID cached", 1, 0, 0);
  if (only < 0 || only == 1)
    one (argv[1], "fork", 0, 1, 0);
  if (only < 0 || only == 2)
    one (argv[1], "raw fork, the parent's ID cached", 1, 1, 0);
  /* A thread made in the child calls first: it must not make the
     forking thread's kept ID (its parent's) trusted again.  */
  if (only < 0 || only == 3)
    one (argv[1], "raw fork, the parent's ID cached, a new thread's call "
	 "first", 1, 1, 1);
  /* Only when asked: it needs to be process 1 of a pid namespace.  */
  if (only == 4 && getpid () != 1)
    t_unsupported ("raw clone into a new pid namespace: run it as process "
		   "1 of one (unshare --pid --fork)");
  else if (only == 4)
    one (argv[1], "raw clone into a new pid namespace from a thread that "
	 "called, a new thread's call first", 2, 1, 1);
  if (only < 0 || only == 6)
    fork_in_handler (argv[1], "fork () from a handler that interrupted a "
		     "call, in the child", 0);
  if (only < 0 || only == 7)
    fork_in_handler (argv[1], "fork () from a handler that interrupted a "
		     "call, a new thread's fill in the child", 1);
  if (only == 5 && getpid () != 1)
    t_unsupported ("raw clone into a new pid namespace while a thread "
		   "holds the turn: run it as process 1 of one");
  else if (only == 5)
    held_across (argv[1], "raw clone into a new pid namespace while a "
		 "thread holds the file's turn");
  return t_done ();
}
