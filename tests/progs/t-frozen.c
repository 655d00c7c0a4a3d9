/* t-frozen FROZEN MIB OTHER TMPFS [PID]: under fallocate-shim
   --supervise, a stuck fill holds up no other call.  Thread A fills MIB
   MiB of holes in a file on FROZEN (ext2, or FUSE over it, so that the
   supervisor fills it by faulting pages in), which is frozen (FIFREEZE)
   once A has begun, or whose FUSE server PID is stopped (SIGSTOP); then
   thread C asks for 1 MiB of holes in a file on OTHER (another ext2: a
   fill too) whose inode number is A's modulo 16, and thread B for 4 KiB
   on TMPFS, which the kernel answers at once.  B and C must return
   while A is stuck (3 s), A once FROZEN is thawed (SIGCONT).  With the
   fills in the supervisor's own memory, A's fault held its memory-map
   lock, C's mapping queued behind it, and every fault of every thread
   behind that.  With PID "kill": the supervisor (our parent) killed
   while A is stuck; then B, from a child of ours, must get ENOSYS at
   once, as fallocate-shim(1) promises once the supervisor is gone (a
   child of the supervisor's, stuck in A's fill, kept the listener and
   the kernel's answer waited for the thaw).  With "gone": we kill
   ourselves (SIGKILL) while A is stuck, leaving nothing under the
   filter; tests/tools/t-gone checks that the wrapper then exits at
   once, and thaws FROZEN.  The calls are the fallocate system call
   itself.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>
#include "tcheck.h"

#define MIB (1LL << 20)

struct call
{
  int fd;
  int64_t len;
  int r;
  volatile int done;
};

static int frozen = -1;
static pid_t server;

/* FROZEN frozen (or its server stopped), or thawed: 0 or an errno.  */
static int
freeze (int on)
{
  if (server > 0)
    return kill (server, on ? SIGSTOP : SIGCONT) < 0 ? errno : 0;
  int unused = 0;		/* the argument is an int's address to
				   valgrind, which the kernel ignores */

  return ioctl (frozen, on ? FIFREEZE : FITHAW, &unused) < 0 ? errno : 0;
}

static void *
run (void *arg)
{
  struct call *c = arg;

  c->r = syscall (SYS_fallocate, c->fd, 0, (int64_t) 0, c->len) < 0
	 ? errno : 0;
  __atomic_store_n (&c->done, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

/* A file of LEN bytes of holes, DIR/NAME.  */
static int
holes (const char *dir, const char *name, int64_t len, char *path)
{
  int fd = t_create (dir, name, path, 4096);

  if (ftruncate (fd, len) < 0)
    perror ("ftruncate");
  return fd;
}

static void
thaw (int sig)
{
  (void) sig;
  freeze (0);
  _exit (3);
}

static void
ms (int n)
{
  struct timespec t = { n / 1000, (n % 1000) * 1000000L };

  while (nanosleep (&t, &t) < 0 && errno == EINTR)
    ;
}

/* Our parent, the supervisor, killed while A is stuck.  We die with it
   (fallocate-shim(1)); a child of ours lives on, and its call B must
   get ENOSYS within 3 s.  The child thaws FROZEN and reports.  */
static int
killed (struct call *a, struct call *b, pthread_t ta, pthread_t tb,
	const char *pa, const char *pb, const char *pc)
{
  pid_t sv = getppid ();

  (void) ta;
  fflush (stdout);
  if (fork () == 0)
    {
      alarm (60);
      while (kill (sv, 0) == 0)
	ms (10);
      pthread_create (&tb, NULL, run, b);
      for (int i = 0; i < 300 && !b->done; i++)
	ms (10);
      int stuck = !a->done, b_in = b->done;
      freeze (0);
      pthread_join (tb, NULL);
      printf ("# b %d; with the supervisor killed and a stuck: b %s\n",
	      b->r, b_in ? "returned" : "waited");
      if (!stuck)
	t_unsupported ("the fill ended before it could be stopped");
      else
	t_ok (b_in && b->r == ENOSYS, "the supervisor killed during a stuck "
	      "fill: a call of what COMMAND started gets ENOSYS at once");
      unlink (pa);
      unlink (pb);
      unlink (pc);
      return t_done ();
    }
  kill (sv, SIGKILL);
  for (;;)
    pause ();
}

int
main (int argc, char **argv)
{
  char pa[4096], pb[4096], pc[4096];
  pthread_t ta, tb, tc;

  if (argc != 5 && argc != 6)
    {
      fprintf (stderr, "usage: t-frozen FROZEN MIB OTHER TMPFS "
	       "[PID|kill|gone]\n");
      return 2;
    }
  int64_t big = atoll (argv[2]) * MIB;
  struct call a = { holes (argv[1], "frozen-a", big, pa), big, -1, 0 };
  struct call c = { t_sibling (argv[3], a.fd, pc, sizeof pc), MIB, -1, 0 };
  struct call b = { t_create (argv[4], "frozen-b", pb, sizeof pb), 4096,
		    -1, 0 };
  if (c.fd < 0)
    c.fd = t_create (argv[3], "frozen-c", pc, sizeof pc);
  if (ftruncate (c.fd, MIB) < 0)
    perror ("ftruncate");
  int killing = argc == 6 && strcmp (argv[5], "kill") == 0;
  int gone = argc == 6 && strcmp (argv[5], "gone") == 0;
  server = argc == 6 && !killing && !gone ? (pid_t) atol (argv[5]) : 0;
  frozen = open (argv[1], O_RDONLY | O_DIRECTORY);
  signal (SIGALRM, thaw);
  alarm (60);
  pthread_create (&ta, NULL, run, &a);
  for (int i = 0; i < 20000 && t_alloc (a.fd) == 0 && !a.done; i++)
    usleep (100);
  int err = freeze (1);
  if (err)
    {
      t_unsupported ("%s: %s", server ? "SIGSTOP to the server" : "FIFREEZE",
		     strerror (err));
      pthread_join (ta, NULL);
      return t_done ();
    }
  ms (200);
  if (killing)
    return killed (&a, &b, ta, tb, pa, pb, pc);
  if (gone)
    {
      printf ("# %s\n", a.done ? "a returned" : "a stuck, killing ourselves");
      fflush (stdout);
      kill (getpid (), SIGKILL);
    }
  pthread_create (&tc, NULL, run, &c);
  ms (50);
  pthread_create (&tb, NULL, run, &b);
  for (int i = 0; i < 300 && !(b.done && c.done); i++)
    ms (10);
  int stuck = !a.done, b_in = b.done, c_in = c.done;
  freeze (0);
  pthread_join (ta, NULL);
  pthread_join (tb, NULL);
  pthread_join (tc, NULL);
  printf ("# a %d, b %d, c %d; while frozen: a %s, b %s, c %s\n", a.r, b.r,
	  c.r, stuck ? "stuck" : "returned", b_in ? "returned" : "waited",
	  c_in ? "returned" : "waited");
  if (!stuck)
    t_unsupported ("the fill ended before it could be stopped");
  else
    {
      t_ok (b_in, "a call the kernel answers returns during a stuck fill");
      t_ok (c_in, "a fill of a file elsewhere returns during a stuck fill");
    }
  t_ok (a.r == 0 && b.r == 0 && c.r == 0
	&& t_nohole (a.fd, 0, big) && t_nohole (c.fd, 0, MIB)
	&& t_alloc (b.fd) >= 4096, "the three calls allocate, once thawed");
  unlink (pa);
  unlink (pb);
  unlink (pc);
  return t_done ();
}
