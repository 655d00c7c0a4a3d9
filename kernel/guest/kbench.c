/* kbench CASE DIR MIB [MODE]: the timings of make check-kernel, in its VM.
   Built twice, static: kbench-fa against libfallocate.a, kbench-glibc
   against glibc alone, so that posix_fallocate is one or the other
   (IMPL names it).  Each case prints one "BENCH case impl seconds..."
   line, and a PASS or FAIL line for what it relies on.

   posix-new:    posix_fallocate of MIB MiB on an empty file, then fsync.
   posix-sparse: the same on a MIB MiB file whose every other 4 KiB block
                 holds data (written, synced and out of the page cache).
   odirect:      a MIB MiB file preallocated by fallocate MODE (0, or
                 128: WRITE_ZEROES, written extents), then 4 KiB O_DIRECT
                 writes at random block offsets, one per 16 KiB of the
                 file, and fsync: what converting unwritten extents costs.
   swapfile:     fallocate MODE of MIB MiB into DIR/swapfile, kept for
                 mkswap and swapon; MODE -1: zeros written instead.
   clockstep:    the median of 21 steps of CLOCK_MONOTONIC, as the
                 timings see it (some ns with the TSC, the tick's 4 ms
                 with jiffies; a median, not the largest, which a
                 preemption inflates): the host reports a ratio only
                 where its times are many steps long.  DIR and MIB
                 unused.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef IMPL
# define IMPL "glibc"
#endif

/* Where the files go: the DIR argument.  */
static const char *dir;
#include "kfile.h"
#define MiB (1 << 20)

static double
now (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
posix (const char *what, int64_t len, int sparse)
{
  static char blk[4096];
  char path[4096];
  int fd = create ("bench-posix", path);

  if (sparse)
    {
      memset (blk, 0x5a, sizeof blk);
      for (int64_t off = 0; off < len; off += 8192)
	if (pwrite (fd, blk, sizeof blk, off) != sizeof blk)
	  {
	    printf ("FAIL: bench %s: pwrite: %s\n", what, strerror (errno));
	    exit (1);
	  }
      fsync (fd);
      drop_caches ();
    }
  double t0 = now ();
  int r = posix_fallocate (fd, 0, len);
  double t1 = now ();
  fsync (fd);
  double t2 = now ();
  printf ("BENCH %s %s %.4f %.4f\n", what, IMPL, t1 - t0, t2 - t0);
  printf ("%s: bench %s %s: posix_fallocate of %lld MiB: %d, %lld bytes "
	  "allocated\n", r == 0 && fblocks (fd) >= len ? "PASS" : "FAIL",
	  what, IMPL, (long long) (len / MiB), r, (long long) fblocks (fd));
  close (fd);
  unlink (path);
}

static void
odirect (int64_t len, int mode)
{
  static char buf[4096] __attribute__ ((aligned (4096)));
  char path[4096];
  int fd = create ("bench-odirect", path);
  uint64_t rng = 42;
  int n = (int) (len / 16384), e;

  e = syscall (SYS_fallocate, fd, mode, 0L, (long) len) ? errno : 0;
  fsync (fd);
  close (fd);
  drop_caches ();
  if (e)
    {
      printf ("UNSUPPORTED: bench odirect mode %d: fallocate: %s\n", mode,
	      strerror (e));
      unlink (path);
      return;
    }
  fd = open (path, O_RDWR | O_DIRECT);
  memset (buf, 0x33, sizeof buf);
  double t0 = now ();
  int bad = 0;
  for (int i = 0; i < n; i++)
    {
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      off_t off = (off_t) (rng % (uint64_t) (len / 4096)) * 4096;
      bad += pwrite (fd, buf, sizeof buf, off) != sizeof buf;
    }
  fsync (fd);
  double t1 = now ();
  printf ("BENCH odirect-%s kernel %.4f %d\n",
	  mode ? "write-zeroes" : "plain", t1 - t0, n);
  printf ("%s: bench odirect mode %d: %d O_DIRECT writes\n",
	  bad ? "FAIL" : "PASS", mode, n);
  close (fd);
  unlink (path);
}

static void
swapfile (int64_t len, int mode)
{
  static char zeros[MiB];
  char path[4096];
  int fd = create ("swapfile", path), e = 0;
  fchmod (fd, 0600);		/* swapon(8) warns of any other mode */
  double t0 = now ();

  if (mode < 0)
    for (int64_t off = 0; off < len && !e; off += MiB)
      e = pwrite (fd, zeros, MiB, off) == MiB ? 0 : errno ? errno : EIO;
  else
    e = syscall (SYS_fallocate, fd, mode, 0L, (long) len) ? errno : 0;
  fsync (fd);
  double t1 = now ();

  printf ("BENCH swapfile-%s kernel %.4f\n",
	  mode < 0 ? "zeros-written" : mode ? "write-zeroes" : "plain",
	  t1 - t0);
  printf ("%s: bench swapfile: %s %lld MiB (%s)\n", e ? "FAIL" : "PASS",
	  mode < 0 ? "zeros written," : mode ? "fallocate WRITE_ZEROES,"
	  : "fallocate,", (long long) (len / MiB), strerror (e));
  close (fd);
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

static void
clockstep (void)
{
  double steps[21], step;

  for (int i = 0; i < 21; i++)
    {
      double a = now (), b;

      while ((b = now ()) == a)
	;
      steps[i] = b - a;
    }
  qsort (steps, 21, sizeof steps[0], cmp_double);
  step = steps[10];
  printf ("BENCH clockstep kernel %.9f\n", step);
  printf ("%s: bench clockstep: %.9f s\n", step > 0 ? "PASS" : "FAIL", step);
}

int
main (int argc, char **argv)
{
  if (argc < 4)
    {
      fprintf (stderr, "usage: kbench CASE DIR MIB [MODE]\n");
      return 2;
    }
  const char *c = argv[1];
  dir = argv[2];
  int64_t len = atoll (argv[3]) * MiB;
  int mode = argc > 4 ? atoi (argv[4]) : 0;

  if (strcmp (c, "posix-new") == 0)
    posix (c, len, 0);
  else if (strcmp (c, "posix-sparse") == 0)
    posix (c, len, 1);
  else if (strcmp (c, "odirect") == 0)
    odirect (len, mode);
  else if (strcmp (c, "swapfile") == 0)
    swapfile (len, mode);
  else if (strcmp (c, "clockstep") == 0)
    clockstep ();
  else
    return 2;
  return 0;
}
