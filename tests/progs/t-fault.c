/* t-fault DIR: the fallback's writes fail part way.  This program defines
   pwrite64, pwrite and madvise; linked dynamically against libfallocate.so
   they are the ones it calls (through its PLT), and they fail on purpose
   at the Kth call: EIO, ENOSPC, a short write, EINTR, 0.  Run under
   fa-seccomp so that posix_fallocate's fallback runs.

   For every K until a call completes without reaching it, both ways of
   the fallback (the mapping, and writing zeros when madvise knows no
   MADV_POPULATE_WRITE), and a range that starts inside the file and one
   that starts past its end: EIO and ENOSPC must be returned with the size
   as before, a short write or EINTR retried to success; either way no
   byte outside the former holes changes and the holes read as zeros.

   A pwrite that returns 0 (a FUSE server may answer so, and will again
   if asked again) must give EIO, not a loop: each call runs under an
   alarm, after which every write fails, so that a hang shows as a FAIL
   and the program goes on.  The same after a failed fault, where the
   holes are then written: EIO, whatever errno the failed fault left.

   A madvise (MADV_POPULATE_WRITE) that returns 0 and does nothing, as
   qemu-user's does, must still leave the range allocated.

   A request larger than the free space must fail with ENOSPC before any
   write or fault: here each one is counted, and refused, so that a
   fallback without that check fails the test without filling the disk.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

#define STR(x) #x
#define QUOTE(x) STR (x)

/* The madvise kinds last: the writing way has no faults to inject.  */
enum fault { F_EIO, F_ENOSPC, F_SHORT, F_EINTR, F_ZERO, F_MADVISE,
	     F_MADVISE_ZERO, F_IGNORED };
static const char *const fault_names[] = {
  "EIO", "ENOSPC", "short write", "EINTR", "pwrite returning 0",
  "madvise EFAULT", "madvise EFAULT, then pwrite returning 0",
  "madvise ignored"
};

/* How long one call may take before it counts as hung, in seconds.  */
#define PATIENCE 5

static int armed, nowrite_map, zeroing, refusing;
static volatile sig_atomic_t hung;
static enum fault kind;
static long calls, at_call, injected, hit, writes, faults;

static void
on_alarm (int sig)
{
  (void) sig;
  hung = 1;
}

static ssize_t
fault_write (int fd, const void *buf, size_t n, off64_t off)
{
  /* Empty writes (the fallback's probe for a swap file) write nothing.  */
  if (armed && n > 0)
    writes++;
  /* Out of a hang, or a write that must not happen: fail it.  */
  if (armed && n > 0 && (hung || refusing))
    {
      errno = hung ? EIO : ENOSPC;
      return -1;
    }
  /* A server that answered 0 once answers so again.  */
  if (armed && n > 0 && zeroing)
    return 0;
  if (armed && n > 0 && ++calls == at_call && kind < F_MADVISE)
    switch (kind)
      {
      case F_ZERO:
	injected++;
	hit = zeroing = 1;
	return 0;
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
      /* len 0 is the fallback's probe for the advice: it must work.  */
      if (len > 0)
	faults++;
      if (len > 0 && refusing)
	{
	  errno = EFAULT;
	  return -1;
	}
      if (kind == F_IGNORED && len > 0)
	{
	  injected++;
	  hit = 1;
	  return 0;		/* qemu-user: accepted, and nothing done */
	}
      if ((kind == F_MADVISE || kind == F_MADVISE_ZERO) && len > 0
	  && ++calls == at_call)
	{
	  injected++;
	  hit = 1;
	  zeroing = kind == F_MADVISE_ZERO;
	  errno = EFAULT;	/* what a failing fault gives */
	  return -1;
	}
    }
  return (int) syscall (SYS_madvise, addr, len, advice);
}

/* Data [0, 64K), a hole to 192K, data [192K, 256K); the call covers
   [OFF, 512K + 123), OFF inside the file or past its end.  */
#define SIZE0 262144
#define END ((512 << 10) + 123)

static int
layout (const char *dir, char *path, size_t size)
{
  int fd = t_create (dir, "fault", path, size);

  t_put (fd, 0, 65536, 50);
  t_put (fd, 196608, 65536, 51);
  return fd;
}

/* No hole in [OFF, OFF + LEN) of PATH, as a descriptor of our own sees
   it: the caller's is the library's to use.  */
static int
nohole (const char *path, int64_t off, int64_t len)
{
  int fd = open (path, O_RDONLY);
  int64_t h = fd < 0 ? -1 : lseek64 (fd, off, SEEK_HOLE);

  if (fd >= 0)
    close (fd);
  return h >= off + len;
}

/* One call with the fault at call K: 1 if K was reached and another K is
   worth trying.  */
static int
one (const char *dir, const char *way, int64_t off, long k)
{
  char path[4096];
  int fd = layout (dir, path, sizeof path), r, want;

  calls = hit = faults = 0;
  at_call = k;
  armed = 1;
  alarm (PATIENCE);
  r = posix_fallocate64 (fd, off, END - off);
  alarm (0);
  armed = 0;
  int reached = calls >= k;
  want = kind == F_EIO || kind == F_ENOSPC ? (reached ? kind == F_EIO
					       ? EIO : ENOSPC : 0)
	 : kind == F_ZERO ? (reached ? EIO : 0)
	 : kind == F_MADVISE_ZERO ? (hit ? EIO : 0) : 0;
  int64_t size = t_size (fd), wsize = r ? SIZE0 : END;
  /* A fault that fails over pages an earlier one allocated (the range's
     ends are faulted in first) leaves nothing to write: 0, no hole.  */
  if (kind == F_MADVISE_ZERO && r == 0)
    want = 0;
  int ok = !hung && r == want && size == wsize
	   && t_same (fd, 0, 65536, 50) && t_same (fd, 196608, 65536, 51)
	   && t_zero (fd, 65536, 131072)
	   && (size <= SIZE0 || t_zero (fd, SIZE0, (size_t) (size - SIZE0)))
	   && (r || nohole (path, off, END - off));
  /* A madvise that does nothing: st_blocks, not only SEEK_HOLE, must
     count the whole range.  */
  if (kind == F_IGNORED)
    ok = ok && t_alloc (fd) >= END - off;
  if (!ok || !reached || kind == F_IGNORED)
    t_ok (ok, "%s way, %s at %s %ld, from %lld: returns %d (got %d), "
	  "size %lld (got %lld), data kept, holes zero%s", way,
	  fault_names[kind], kind == F_IGNORED ? "every fault, faults"
	  : "call", kind == F_IGNORED ? faults : k, (long long) off, want, r,
	  (long long) wsize, (long long) size,
	  hung ? "; HUNG: no return in " QUOTE (PATIENCE) " s" : "");
  close (fd);
  unlink (path);
  int again = reached && kind != F_IGNORED && !hung;
  hung = zeroing = 0;
  /* Every call is alike with the advice ignored; after a hang, every
     later K would hang as long.  */
  return again;
}

/* A request larger than the free space: ENOSPC, the file as it was, and
   no write or fault before it, for a range past the end of file and for
   one over holes.  */
static void
too_big (const char *dir, const char *way)
{
  char path[4096];
  int fd = layout (dir, path, sizeof path);
  struct statvfs v;

  /* All free blocks, those reserved for root too: more than any caller
     may have.  */
  if (fstatvfs (fd, &v) < 0 || v.f_blocks == 0)
    {
      t_unsupported ("%s way: ENOSPC before writing: no free space count "
		     "here", way);
      close (fd);
      unlink (path);
      return;
    }
  int64_t len = (int64_t) (v.f_bfree * v.f_frsize) + (64 << 20);
  for (int sparse = 0; sparse < 2; sparse++)
    {
      int64_t off = sparse ? 0 : 32768, size0 = sparse ? len : SIZE0;

      if (sparse && ftruncate64 (fd, len) < 0)
	{
	  perror ("ftruncate");
	  exit (2);
	}
      writes = faults = 0;
      refusing = armed = 1;
      int r = posix_fallocate64 (fd, off, len - (sparse ? 0 : off));
      refusing = armed = 0;
      t_ok (r == ENOSPC && writes == 0 && faults == 0 && t_size (fd) == size0
	    && t_same (fd, 0, 65536, 50) && t_same (fd, 196608, 65536, 51),
	    "%s way: %lld bytes %s, more than the %lld free: ENOSPC (got %d) "
	    "before any write (%ld) or fault (%ld), size %lld (got %lld)",
	    way, (long long) len, sparse ? "of a file mostly holes"
	    : "past the end of file", (long long) (len - (64 << 20)), r,
	    writes, faults, (long long) size0, (long long) t_size (fd));
    }
  close (fd);
  unlink (path);
}

int
main (int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : ".";
  const int64_t offs[] = { 32768, SIZE0 + 37777 };
  struct sigaction sa = { .sa_handler = on_alarm };
  long tries = 0;

  if (!t_filtered ())
    {
      t_unsupported ("t-fault: run it under fa-seccomp");
      return 0;
    }
  /* The alarm only sets HUNG, which the writes above read.  */
  sigaction (SIGALRM, &sa, NULL);
  for (nowrite_map = 0; nowrite_map < 2; nowrite_map++)
    {
      const char *way = nowrite_map ? "writing" : "mapping";

      for (int o = 0; o < 2; o++)
	for (kind = F_EIO; kind <= F_IGNORED; kind++)
	  {
	    if (nowrite_map && kind >= F_MADVISE)
	      continue;
	    long k = 1;
	    while (one (dir, way, offs[o], k))
	      k++;
	    tries += k;
	  }
      too_big (dir, way);
    }
  printf ("# %ld calls, %ld faults injected\n", tries, injected);
  t_ok (injected > 0, "faults injected: %ld, in %ld calls", injected, tries);
  return t_done ();
}
