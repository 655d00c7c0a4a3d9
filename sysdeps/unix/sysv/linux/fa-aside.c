/* A thread of our own for what must not touch the process's descriptor
   table: opening a file there and closing it would drop every POSIX
   record lock the process holds on it (fa-file.c says why that matters).

   The thread is made with clone itself, not pthread_create, so that
   nothing on the way takes a lock: a call from a signal handler that
   interrupted pthread_create or pthread_join in the same thread waited
   for ever on glibc's lock of its cache of stacks (t-handler).  What
   that costs:
   - the thread is not one the C library knows of.  It runs on a stack
     of ours with the caller's thread-local storage (errno among it), so
     what runs there calls the kernel and code of ours only, no stdio or
     malloc (a handler may have interrupted them): files are read with
     __fa_line.  Nothing else may use that storage meanwhile: the caller
     waits with every signal blocked until the thread is gone (a
     handler's system calls changed the thread's errno: t-handler), so
     a signal to the calling thread, even one that kills by default, is
     acted on only after the thread's work, which may be a whole fill
     through a descriptor of ours (SIGKILL is at once).
   - cancellation is off meanwhile, as the thread's cancellation points
     would act on the caller's state;
   - a set*id call of another thread meanwhile does not reach it (glibc
     signals the threads it knows), so it may open files with the
     credentials of before.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/futex.h>
#include "fa-arch.h"
#include "fa-file.h"

/* <linux/close_range.h>, which C libraries older than Linux 5.9's
   headers lack.  */
#define FA_CLOSE_RANGE_UNSHARE (1U << 1)

/* The thread's stack; the deepest user, a fill through a descriptor of
   our own, needs about 20 KiB (more under ASan).  The thread starts
   SLACK bytes inside its end: its first frame's callee may read above
   it (arm's syscall () loads three words of arguments from its caller's
   frame, and faulted past the end of the stack).  */
#define STACK (512 << 10)
#define SLACK 256

/* A thread pointer for the thread, where the leaf's fa-arch.h says the
   caller's must be passed (m68k).  */
#ifdef FA_CLONE_TLS
# define SETTLS CLONE_SETTLS
#else
# define SETTLS 0
# define FA_CLONE_TLS() NULL
#endif

/* A descriptor table of the calling thread's own, without the process's
   files: close_range unshares the table and closes the range in the
   copy, so that none of the process's open files is held (a pipe
   another thread closes reaches EOF at its reader at once).  It copies
   descriptors 0 to 63 first (the smallest table) and closes them: a
   FLUSH to a FUSE server for each open on it (t-flush).  Linux 5.9;
   before that, or where a sandbox refuses close_range, unshare copies
   the whole table, which holds every open file until the thread is
   gone, just after the caller wakes (the kernel clears the thread's ID
   before it closes its files).  */
static int
own_table (void)
{
#ifdef SYS_close_range
  if (syscall (SYS_close_range, 0U, ~0U, FA_CLOSE_RANGE_UNSHARE) == 0)
    return 0;
#endif
  return unshare (CLONE_FILES);
}

struct aside
{
  int (*fn) (void *);
  void *arg;
  int ret;
  pid_t tid;			/* the thread's ID until it is gone */
};

static int
aside (void *arg)
{
  struct aside *a = arg;

  a->ret = own_table () < 0 ? EBADF : a->fn (a->arg);
  return 0;
}

/* The flags of a thread of the process, which qemu-user requires all
   of; the kernel stores the thread's ID in TID and clears it, waking a
   waiter, when the thread is gone.  */
#define THREAD (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND \
		| CLONE_THREAD | CLONE_SYSVSEM | CLONE_PARENT_SETTID \
		| CLONE_CHILD_CLEARTID)

/* FN (ARG) in a thread of ours whose descriptor table is its own, with
   every signal blocked: what it opens and closes there touches no
   descriptor, record lock or lease of the process.  FN's result;
   ENOMEM if no stack or thread can be had (EAGAIN), EBADF if no such
   table can be or a sandbox refuses the thread.  Async-signal-safe.  */
int
__fa_aside (int (*fn) (void *), void *arg)
{
  struct aside a = { fn, arg, EBADF, 0 };
  int saved = errno, cancel, err;
  sigset_t old;
  pid_t t, w;
  char *stack = mmap (NULL, STACK, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

  if (stack == MAP_FAILED)
    return ENOMEM;
  pthread_setcancelstate (PTHREAD_CANCEL_DISABLE, &cancel);
  __fa_sigblock (&old);
#ifdef FA_STACK_GROWS_UP
  t = clone (aside, stack + SLACK, THREAD | SETTLS, &a, &a.tid,
	     FA_CLONE_TLS (), &a.tid);
#else
  t = clone (aside, stack + STACK - SLACK, THREAD | SETTLS, &a, &a.tid,
	     FA_CLONE_TLS (), &a.tid);
#endif
  err = t >= 0 ? 0 : (errno == EAGAIN || errno == ENOMEM) ? ENOMEM : EBADF;
  /* Shared, not private: the kernel's wake at the thread's exit is.  */
  while (t > 0 && (w = __atomic_load_n (&a.tid, __ATOMIC_ACQUIRE)) != 0)
    syscall (SYS_futex, &a.tid, FUTEX_WAIT, w, NULL, NULL, 0);
  __fa_sigrestore (&old);
  munmap (stack, STACK);
  pthread_setcancelstate (cancel, NULL);
  errno = saved;
  return err ? err : a.ret;
}

/* Lines of a file read into L's buffer with read(2).  0, or -1.  */
int
__fa_lines_open (struct fa_lines *l, const char *path)
{
  l->len = l->pos = 0;
  l->fd = open (path, O_RDONLY | O_CLOEXEC);
  return l->fd < 0 ? -1 : 0;
}

/* The next line of L into LINE, without its newline, cut to MAX - 1
   bytes: 1, or 0 at the end of the file or on an error.  */
int
__fa_line (struct fa_lines *l, char *line, size_t max)
{
  size_t k = 0;

  for (;;)
    {
      if (l->pos == l->len)
	{
	  ssize_t r = read (l->fd, l->buf, sizeof l->buf);

	  if (r < 0 && errno == EINTR)
	    continue;
	  if (r <= 0)
	    {
	      line[k] = '\0';
	      return k > 0;
	    }
	  l->len = (size_t) r;
	  l->pos = 0;
	}
      char c = l->buf[l->pos++];
      if (c == '\n')
	{
	  line[k] = '\0';
	  return 1;
	}
      if (k < max - 1)
	line[k++] = c;
    }
}
