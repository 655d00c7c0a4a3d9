/* t-flush MNT FLUSHES DIR: the FLUSH requests a FUSE server sees from a
   posix_fallocate call on a file of another filesystem, under fa-seccomp
   ENOSYS (tests/libfallocate.fuse/flush.exp).  MNT is tests/tools/
   fa-badfuse, which writes to FLUSHES how many FLUSH it has answered;
   DIR a scratch directory elsewhere.  The call's file has a hole inside
   and is written through an O_WRONLY descriptor: the library opens one
   of its own in a thread whose descriptor table is its own (fa-aside.c,
   own_table).  close_range (0, ~0U, CLOSE_RANGE_UNSHARE) makes that
   table with a copy of descriptors 0 to 63 (the smallest table: every
   kernel since close_range came, Linux 5.9; 6.11's rework and its
   backports kept it) and closes them: one FLUSH for each of those open
   on the server, none for descriptors above 63.  Where close_range is
   refused, unshare copies the whole table, closed at the thread's end:
   one FLUSH for every descriptor open on the server, most of them after
   the call has returned (the caller is woken before the copy is
   closed).  Asserted: the
   exact count with N descriptors below 64, N above, N across 64, the
   same two of them with close_range refused (a filter of ours), 0 for
   a call through an O_RDWR descriptor (no thread), and every call's
   result 0 with the hole filled.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <fallocate.h>
#include "tcheck.h"

#define N 10
#define HOLE (1 << 20)		/* data at 0 and here, a hole between */
#define END (HOLE + 4096)

#ifndef SYS_close_range
# define SYS_close_range 436
#endif
#define CLOSE_RANGE_UNSHARE_ (1U << 1)

static const char *mnt, *flushes, *dir;

/* How many FLUSH the server has answered; -1 if FLUSHES is unreadable.  */
static long
count (void)
{
  char buf[32];
  int fd = open (flushes, O_RDONLY);
  ssize_t n = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);

  if (fd >= 0)
    close (fd);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  return strtol (buf, NULL, 10);
}

/* N descriptors of the server's file at FIRST, FIRST+1...; FIRST 0: where
   open puts them (below 64).  0, or -1 having said why.  */
static int
place (const char *what, int first, int fds[N])
{
  char path[4096];

  snprintf (path, sizeof path, "%s/flushme", mnt);
  for (int i = 0; i < N; i++)
    {
      int fd = open (path, O_RDWR | O_CREAT, 0644);

      if (fd >= 0 && first && fd != first + i)
	{
	  int to = dup2 (fd, first + i);
	  close (fd);
	  fd = to;
	}
      if (fd < 0)
	{
	  t_ok (0, "%s: descriptor %d on the server (%s)", what, i,
		strerror (errno));
	  while (i--)
	    close (fds[i]);
	  return -1;
	}
      fds[i] = fd;
    }
  return 0;
}

/* One posix_fallocate over the hole of a new file of DIR, through a
   descriptor opened ACCMODE, with the server's descriptors placed from
   FIRST: the FLUSH it caused must be WANT.  */
static void
measure (const char *what, int accmode, int first, long want)
{
  char path[4096];
  int fds[N], fd, cfd, r;
  long c0, c1, c2;

  if (place (what, first, fds) < 0)
    return;
  fd = t_create (dir, "holey", path, sizeof path);
  t_put (fd, 0, 4096, 1);
  t_put (fd, HOLE, 4096, 2);
  cfd = open (path, accmode);
  if (t_nohole (fd, 0, END) || cfd < 0)
    t_unsupported ("%s (%s)", what, cfd < 0 ? strerror (errno)
		   : "no hole inside the file on this filesystem");
  else
    {
      c0 = count ();
      r = posix_fallocate (cfd, 0, END);
      c1 = c2 = count ();
      /* unshare's copy is closed at the thread's end, after the caller
	 is woken (CLONE_CHILD_CLEARTID): those FLUSH may come after the
	 call returns.  Up to 10 s for them, then 0.2 s for any more.  */
      for (int i = 0; i < 1000 && c2 - c0 < want; i++)
	{
	  usleep (10000);
	  c2 = count ();
	}
      usleep (200000);
      c2 = count ();
      printf ("%s: FLUSH before %ld, when the call returned %ld, at last "
	      "%ld\n", what, c0, c1, c2);
      t_ok (r == 0, "%s: posix_fallocate returns 0 (got %d)", what, r);
      t_ok (r == 0 && t_nohole (fd, 0, END) && t_same (fd, 0, 4096, 1)
	    && t_same (fd, HOLE, 4096, 2) && t_zero (fd, 4096, HOLE - 4096),
	    "%s: the hole filled, the data unchanged", what);
      t_ok (c0 >= 0 && c2 - c0 == want, "%s: %ld FLUSH (got %ld)", what, want,
	    c2 - c0);
    }
  if (cfd >= 0)
    close (cfd);
  close (fd);
  unlink (path);
  for (int i = 0; i < N; i++)
    close (fds[i]);
}

/* close_range refused with ENOSYS from now on, as by a kernel before
   5.9: the library's thread takes unshare.  0, or -1.  */
static int
refuse_close_range (void)
{
#if defined __x86_64__ && !defined __ILP32__
# define ARCH AUDIT_ARCH_X86_64
#elif defined __i386__
# define ARCH AUDIT_ARCH_I386
#endif
#ifdef ARCH
  struct sock_filter f[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, ARCH, 0, 3),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_close_range, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { sizeof f / sizeof f[0], f };

  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
      && prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0)
    return 0;
#endif
  return -1;
}

int
main (int argc, char **argv)
{
  struct utsname u;
  int copy64, err;

  if (argc != 4)
    {
      fprintf (stderr, "usage: t-flush MNT FLUSHES DIR\n");
      return 2;
    }
  mnt = argv[1];
  flushes = argv[2];
  dir = argv[3];
  if (t_valgrind ())
    {
      t_unsupported ("flush: valgrind 3.19 carries close_range out itself: "
		     "the thread's table holds every descriptor, a FLUSH for "
		     "each, as after unshare");
      return t_done ();
    }
  t_ok (t_filtered () == ENOSYS, "fallocate answers ENOSYS (got %d)",
	t_filtered ());
  t_ok (count () >= 0, "the server counts FLUSH (in FLUSHES)");
  /* What the library's own_table will get.  Single-threaded, so nothing
     is unshared; no descriptor is that high, so nothing is closed.  */
  copy64 = syscall (SYS_close_range, 1U << 30, 1U << 30,
		    CLOSE_RANGE_UNSHARE_) == 0;
  err = errno;
  uname (&u);
  printf ("Linux %s: close_range with CLOSE_RANGE_UNSHARE %s\n", u.release,
	  copy64 ? "answers" : strerror (err));

  measure ("O_RDWR, 10 below 64", O_RDWR, 0, 0);
  measure ("O_WRONLY, 10 below 64", O_WRONLY, 0, N);
  measure ("O_WRONLY, 10 from 64", O_WRONLY, 64, copy64 ? 0 : N);
  measure ("O_WRONLY, 10 from 60", O_WRONLY, 60, copy64 ? 64 - 60 : N);
  if (!copy64)
    t_unsupported ("unshare: close_range already refused");
  else if (refuse_close_range () < 0)
    t_unsupported ("unshare: no filter refusing close_range (%s)",
		   strerror (errno));
  else
    {
      measure ("unshare, O_WRONLY, 10 below 64", O_WRONLY, 0, N);
      measure ("unshare, O_WRONLY, 10 from 64", O_WRONLY, 64, N);
      measure ("unshare, O_RDWR, 10 from 64", O_RDWR, 64, 0);
    }
  return t_done ();
}
