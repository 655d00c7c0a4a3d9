/* t-under FILE LOWER [SOLID]: posix_fallocate through a FUSE passthrough (bindfs),
   judged by the file underneath.  FILE is a path on the FUSE filesystem,
   LOWER the same file on the filesystem it passes through to (xfs).  Run
   under fa-seccomp, so that the fallback runs.

   A file written at [0, 4M) and [6M, 7M) has a hole at [4M, 6M) in LOWER.
   FUSE has no FIEMAP and no SEEK_HOLE that finds it, and its st_blocks is
   LOWER's, which on xfs counts the space kept past the end of file after
   writes that extend it: st_blocks may cover the size with the hole still
   there, which an earlier fallback took for "no holes".  The call must
   leave no hole in LOWER and every byte written before unchanged.

   SOLID: a file to make on a FUSE filesystem that cannot have holes
   (exFAT by exfat-fuse), where a call comes first: the library keeps
   that mount's answer, which must not be taken for bindfs's.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

#define MiB (1 << 20)

int
main (int argc, char **argv)
{
  struct stat64 st;

  if (argc != 3 && argc != 4)
    {
      fprintf (stderr, "usage: t-under FILE LOWER [SOLID]\n");
      return 2;
    }
  if (argc == 4)
    {
      int s = open (argv[3], O_RDWR | O_CREAT | O_TRUNC, 0644);
      t_put (s, 0, 4096, 9);
      t_ok (s >= 0 && posix_fallocate64 (s, 0, 2 * MiB) == 0
	    && t_same (s, 0, 4096, 9), "first, a call on exFAT through FUSE");
      close (s);
      unlink (argv[3]);
    }
  int fd = open (argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    {
      perror (argv[1]);
      return 2;
    }
  for (int i = 0; i < 4; i++)
    t_put (fd, (int64_t) i * MiB, MiB, (unsigned) i + 1);
  t_put (fd, 6 * MiB, MiB, 7);
  fsync (fd);
  int low = open (argv[2], O_RDONLY);
  if (low < 0 || lseek64 (low, 0, SEEK_HOLE) != 4 * MiB)
    {
      t_unsupported ("t-under: %s: no hole at 4 MiB underneath", argv[2]);
      return t_done ();
    }
  fstat64 (fd, &st);
  printf ("# through FUSE: size %lld, st_blocks %lld bytes (%s the size)\n",
	  (long long) st.st_size, (long long) st.st_blocks * 512,
	  st.st_blocks * 512 >= st.st_size ? "covering" : "below");
  int r = posix_fallocate64 (fd, 0, 7 * MiB);
  t_ok (r == 0, "FUSE over xfs, a hole inside: 0 (got %d)", r);
  off64_t h = lseek64 (low, 0, SEEK_HOLE);
  t_ok (h >= 7 * MiB, "FUSE over xfs: no hole left underneath (first at "
	"%lld)", (long long) h);
  int same = t_same (fd, 6 * MiB, MiB, 7) && t_zero (fd, 4 * MiB, 2 * MiB);
  for (int i = 0; i < 4; i++)
    same &= t_same (fd, (int64_t) i * MiB, MiB, (unsigned) i + 1);
  t_ok (same, "FUSE over xfs: the data unchanged, the hole zeros");
  t_ok (fstat64 (fd, &st) == 0 && st.st_size == 7 * MiB,
	"FUSE over xfs: size 7 MiB (got %lld)", (long long) st.st_size);
  close (low);
  close (fd);
  unlink (argv[1]);
  return t_done ();
}
