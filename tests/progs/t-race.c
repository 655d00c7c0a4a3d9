/* t-race DIR ROUNDS: a writer thread puts non-zero 4 KiB blocks into a
   16 MiB file while posix_fallocate fills it; no block it wrote may read
   back otherwise.  Run under fa-seccomp the fill is the fallback's zero
   writing, which is what can race.

   Two layouts: "holes", a 16 MiB sparse file (every block a hole the
   fallback checks and fills), and "tail", an empty file the fallback
   extends while the writer writes just past the end of file, where the
   fallback appends large zero blocks.  "wronly" is "holes" with
   posix_fallocate given an O_WRONLY descriptor.

   With "writing" (a FUSE filesystem, where the fallback can only write),
   the writing way's documented windows are counted and reported apart,
   not failures: a block whose one wrong byte is its last, zero (a writer
   filling the block between the fallback's check and its one-byte write
   there), and in "tail" a block all zeros (written past the end of file
   between the fallback's fstat and its next 1 MiB of zeros); any other
   loss still is.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

#define BLK 4096
#define NBLK 4096			/* 16 MiB */

static int fd, tail, writing;
static atomic_int started, done;
static unsigned char value[NBLK];	/* last byte value written per block */
static long writes;
static uint64_t rng;

static uint64_t
rnd (void)
{
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 0x2545F4914F6CDD1DULL;
}

static void *
writer (void *arg)
{
  static unsigned char b[BLK];
  unsigned char v = 0;

  (void) arg;
  while (!atomic_load (&done))
    {
      int64_t blk = (int64_t) (rnd () % NBLK);
      if (tail)
	{
	  /* Just past the end of file: where an extension writes next.  */
	  blk = t_size (fd) / BLK + (int64_t) (rnd () % 64);
	  if (blk >= NBLK)
	    blk = (int64_t) (rnd () % NBLK);
	}
      v = v % 255 + 1;
      memset (b, v, sizeof b);
      if (pwrite64 (fd, b, BLK, blk * BLK) != BLK)
	{
	  perror ("writer: pwrite");
	  exit (2);
	}
      value[blk] = v;
      writes++;
      atomic_store (&started, 1);
    }
  return NULL;
}

/* Blocks that do not read as last written (or as zeros if never); *WINDOW
   counts apart those whose only wrong byte is the range's last one, zero:
   the one window fa-map.c documents for its mapping way (a writer that
   writes that byte past the end of file between the fill's fstat and its
   one-byte write there); with WRITING, any block's last byte, zero.  */
static long
lost (long *window)
{
  static unsigned char b[BLK];
  long n = 0;

  for (int64_t blk = 0; blk < NBLK; blk++)
    {
      int bad = pread64 (fd, b, BLK, blk * BLK) != BLK;
      int first = -1, count = 0;
      for (int i = 0; i < BLK; i++)
	if (b[i] != value[blk])
	  {
	    count++;
	    if (first < 0)
	      first = i;
	  }
      if (bad || count)
	printf ("# block %lld: %d bytes differ from %d (0x%02x, want 0x%02x)\n",
		(long long) blk, count, first, first >= 0 ? b[first] : 0, value[blk]);
      if (!bad && count == 1 && (blk == NBLK - 1 || writing)
	  && first == BLK - 1 && b[first] == 0)
	++*window;
      /* The writing way's other window, past the end of file: a block
	 written there between the fallback's fstat and its next 1 MiB of
	 zeros is overwritten by them, whole.  */
      else if (!bad && count == BLK && writing && tail
	       && t_zero (fd, blk * BLK, BLK))
	++*window;
      else
	n += bad || count;
    }
  return n;
}

static void
rounds (const char *dir, int nrounds, const char *layout)
{
  char path[4096];
  long total = 0, bad = 0, r = 0, oversize = 0, window = 0;

  tail = strcmp (layout, "tail") == 0;
  int wronly = strcmp (layout, "wronly") == 0;
  for (int round = 0; round < nrounds; round++)
    {
      pthread_t t;

      fd = t_create (dir, "race", path, sizeof path);
      if (!tail)
	ftruncate64 (fd, (int64_t) NBLK * BLK);
      memset (value, 0, sizeof value);
      writes = 0;
      atomic_store (&started, 0);
      atomic_store (&done, 0);
      if (pthread_create (&t, NULL, writer, NULL) != 0)
	{
	  perror ("pthread_create");
	  exit (2);
	}
      while (!atomic_load (&started))
	;
      int cfd = wronly ? open (path, O_WRONLY) : fd;
      r |= posix_fallocate64 (cfd, 0, (int64_t) NBLK * BLK);
      if (cfd != fd)
	close (cfd);
      atomic_store (&done, 1);
      pthread_join (t, NULL);
      total += writes;
      bad += lost (&window);
      /* Appending past the end of file may land after the writer's
	 block: up to one 1 MiB append beyond the range, all zeros
	 (fa-map.c).  Anything else is wrong.  */
      int64_t size = t_size (fd), want = (int64_t) NBLK * BLK;
      oversize += size < want || size > want + (1 << 20)
		  || !t_zero (fd, want, (size_t) (size - want));
      close (fd);
      unlink (path);
    }
  printf ("# %s: %d rounds, %ld blocks written, %ld lost, %ld in the "
	  "documented windows\n", layout, nrounds, total, bad, window);
  t_ok (r == 0, "race %s: posix_fallocate succeeds (errors or-ed: %ld)",
	layout, r);
  t_ok (bad == 0, "race %s: no written block lost (%ld of %ld)", layout, bad,
	total);
  t_ok (oversize == 0, "race %s: size 16 MiB, or up to 1 MiB of our zeros "
	"more (%ld rounds otherwise)", layout, oversize);
}

int
main (int argc, char **argv)
{
  if (argc != 3 && !(argc == 4 && strcmp (argv[3], "writing") == 0))
    {
      fprintf (stderr, "usage: t-race DIR ROUNDS [writing]\n");
      return 2;
    }
  writing = argc == 4;
  rng = (uint64_t) getpid () * 0x9E3779B97F4A7C15ULL + 1;
  rounds (argv[1], atoi (argv[2]), "holes");
  rounds (argv[1], atoi (argv[2]), "tail");
  rounds (argv[1], atoi (argv[2]), "wronly");
  return t_done ();
}
