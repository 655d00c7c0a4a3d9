/* t-fault DIR: the fallback's writes fail part way.  This program defines
   pwrite64, pwrite and madvise; linked dynamically against libfallocate.so
   they are the ones it calls (through its PLT), and they fail on purpose
   at the Kth call: EIO, ENOSPC, a short write, EINTR.  Run under
   fa-seccomp so that posix_fallocate's fallback runs.

   For every K until a call completes without reaching it, and both ways
   of the fallback (the mapping, and writing zeros when madvise knows no
   MADV_POPULATE_WRITE): EIO and ENOSPC must be returned with the size as
   before, a short write or EINTR retried to success; either way no byte
   outside the former holes changes and the holes read as zeros.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

enum fault { F_EIO, F_ENOSPC, F_SHORT, F_EINTR, F_MADVISE };
static const char *const fault_names[] = {
  "EIO", "ENOSPC", "short write", "EINTR", "madvise EFAULT"
};

static int armed, nowrite_map;
static enum fault kind;
static long calls, at_call, injected;

static ssize_t
fault_write (int fd, const void *buf, size_t n, off64_t off)
{
  /* Empty writes (the fallback's probe for a swap file) write nothing.  */
  if (armed && n > 0 && ++calls == at_call && kind != F_MADVISE)
    switch (kind)
      {
      case F_EIO:
      case F_ENOSPC:
	injected++;
	errno = kind == F_EIO ? EIO : ENOSPC;
	return -1;
      case F_SHORT:
	if (n > 1)
	  {
	    injected++;
	    n /= 2;
	  }
	break;
      default:
	injected++;
	errno = EINTR;
	return -1;
      }
  return syscall (SYS_pwrite64, fd, buf, n, off);
}

ssize_t
pwrite64 (int fd, const void *buf, size_t n, off64_t off)
{
  return fault_write (fd, buf, n, off);
}

ssize_t
pwrite (int fd, const void *buf, size_t n, off_t off)
{
  return fault_write (fd, buf, n, off);
}

int
madvise (void *addr, size_t len, int advice)
{
  if (armed && advice == MADV_POPULATE_WRITE)
    {
      if (nowrite_map)
	{
	  errno = EINVAL;	/* a kernel before 5.14 */
	  return -1;
	}
      if (kind == F_MADVISE && len > 0 && ++calls == at_call)
	{
	  injected++;
	  errno = EFAULT;	/* what a failing fault gives */
	  return -1;
	}
    }
  return (int) syscall (SYS_madvise, addr, len, advice);
}

/* Data [0, 64K), a hole to 192K, data [192K, 256K); the call covers
   [32K, 512K + 123).  */
#define END ((512 << 10) + 123)

static int
layout (const char *dir, char *path, size_t size)
{
  int fd = t_create (dir, "fault", path, size);

  t_put (fd, 0, 65536, 50);
  t_put (fd, 196608, 65536, 51);
  return fd;
}

/* One call with the fault at call K: 1 if K was reached.  */
static int
one (const char *dir, const char *way, long k)
{
  char path[4096];
  int fd = layout (dir, path, sizeof path), r, want;

  calls = 0;
  at_call = k;
  armed = 1;
  r = posix_fallocate64 (fd, 32768, END - 32768);
  armed = 0;
  int reached = calls >= k;
  want = !reached || kind == F_SHORT || kind == F_EINTR || kind == F_MADVISE
	 ? 0 : kind == F_EIO ? EIO : ENOSPC;
  int64_t size = t_size (fd), wsize = r ? 262144 : END;
  int ok = r == want && size == wsize
	   && t_same (fd, 0, 65536, 50) && t_same (fd, 196608, 65536, 51)
	   && t_zero (fd, 65536, 131072)
	   && (size <= 262144 || t_zero (fd, 262144, (size_t) (size - 262144)))
	   && (r || t_nohole (fd, 32768, END - 32768));
  if (!ok || !reached)
    t_ok (ok, "%s way, %s at call %ld: returns %d (got %d), size %lld "
	  "(got %lld), data kept, holes zero", way, fault_names[kind], k,
	  want, r, (long long) wsize, (long long) size);
  close (fd);
  unlink (path);
  return reached;
}

int
main (int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : ".";
  long tries = 0;

  if (!t_filtered ())
    {
      t_unsupported ("t-fault: run it under fa-seccomp");
      return 0;
    }
  for (nowrite_map = 0; nowrite_map < 2; nowrite_map++)
    for (kind = F_EIO; kind <= F_MADVISE; kind++)
      {
	if (nowrite_map && kind == F_MADVISE)
	  continue;
	long k = 1;
	while (one (dir, nowrite_map ? "writing" : "mapping", k))
	  k++;
	tries += k;
      }
  printf ("# %ld calls, %ld faults injected\n", tries, injected);
  t_ok (injected > 0, "faults injected: %ld, in %ld calls", injected, tries);
  return t_done ();
}
