/* t-pages DIR: the fallback's mapping way on tmpfs, run under fa-seccomp.
   tmpfs has no FIEMAP: its pages are its storage, and the fallback faults
   in only those that mincore does not find in memory, asking 16 MiB at a
   time inside 64 MiB windows.  A sparse file with data pages scattered
   across those steps and windows, and holes of one page and of many; a
   filter refuses every pwrite once the data is written, so that the
   call must allocate without writing (falling back to the writing way
   fails it).  Every hole of the range must be allocated (SEEK_HOLE),
   every hole outside it left, every data page unchanged; a second call
   over the range, now all allocated, changes nothing.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <fallocate.h>
#include "tcheck.h"

#define KiB 1024LL
#define MiB (1024 * KiB)
#define FROM (12 * MiB)
#define TO (68 * MiB)
#define SIZE (72 * MiB)

/* Data pages: inside the range at its ends, around the 16 MiB steps
   (relative to FROM: 28 and 44 MiB) and the 64 MiB window, one page
   apart and in a run; outside it at 4 and 70 MiB.  */
static const long long data[] = {
  4 * MiB, FROM, FROM + 8 * KiB, 20 * MiB, 28 * MiB - 4 * KiB, 28 * MiB,
  40 * MiB, 40 * MiB + 4 * KiB, 40 * MiB + 8 * KiB, 44 * MiB + 4 * KiB,
  64 * MiB - 4 * KiB, 64 * MiB, TO - 4 * KiB, 70 * MiB,
};
#define NDATA (sizeof data / sizeof data[0])

/* pwrite64, pwritev, pwritev2: EPERM from now on.  */
static int
no_pwrite (void)
{
  struct sock_filter prog[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_pwrite64, 3, 0),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_pwritev, 2, 0),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_pwritev2, 1, 0),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
  };
  struct sock_fprog fprog = { sizeof prog / sizeof prog[0], prog };

  return prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
	 || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) < 0 ? -1 : 0;
}

/* Whether the file's holes are exactly those outside [FROM, TO), and
   its data pages unchanged.  */
static void
check (int fd, const char *what)
{
  int same = 1;

  for (size_t i = 0; i < NDATA; i++)
    same &= t_same (fd, data[i], 4096, (unsigned) i + 1);
  t_ok (same, "%s: every data page unchanged", what);
  t_ok (t_zero (fd, FROM + 4 * KiB, 4096) && t_zero (fd, 30 * MiB, 4096)
	&& t_zero (fd, TO - 8 * KiB, 4096), "%s: holes read as zeros", what);
  off64_t h = lseek64 (fd, FROM, SEEK_HOLE);
  t_ok (h >= TO, "%s: no hole left in the range (first at %lld)", what,
	(long long) h);
  t_ok (lseek64 (fd, 0, SEEK_HOLE) == 0
	&& lseek64 (fd, 4 * MiB + 4 * KiB, SEEK_HOLE) == 4 * MiB + 4 * KiB
	&& lseek64 (fd, TO, SEEK_HOLE) == TO
	&& lseek64 (fd, 70 * MiB + 4 * KiB, SEEK_HOLE) == 70 * MiB + 4 * KiB,
	"%s: the holes outside the range left", what);
  t_ok (t_size (fd) == SIZE, "%s: size %lld (want %lld)", what,
	(long long) t_size (fd), SIZE);
}

int
main (int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : ".";
  char path[4096];
  struct statfs sf;

  if (statfs (dir, &sf) < 0 || sf.f_type != TMPFS_MAGIC)
    {
      t_unsupported ("t-pages: %s is not tmpfs", dir);
      return t_done ();
    }
  if ((long long) sf.f_bavail * sf.f_bsize < TO - FROM + 4 * MiB)
    {
      t_unsupported ("t-pages: %s has less than %lld MiB free", dir,
		     (TO - FROM) / MiB + 4);
      return t_done ();
    }
  int fd = t_create (dir, "pages", path, sizeof path);
  ftruncate64 (fd, SIZE);
  for (size_t i = 0; i < NDATA; i++)
    t_put (fd, data[i], 4096, (unsigned) i + 1);
  if (no_pwrite () < 0)
    {
      t_unsupported ("t-pages: seccomp: %s", strerror (errno));
      return t_done ();
    }
  int r = posix_fallocate64 (fd, FROM, TO - FROM);
  t_ok (r == 0, "tmpfs, holes inside, no write allowed: 0 (got %d)", r);
  check (fd, "after the call");
  r = posix_fallocate64 (fd, FROM, TO - FROM);
  t_ok (r == 0, "tmpfs, the range allocated, again: 0 (got %d)", r);
  check (fd, "after it again");
  close (fd);
  unlink (path);
  return t_done ();
}
