/* t-fusealt DIR1 DIR2 [CALLS]: two FUSE mounts alternated (item 6 of an
   outside review).  Under fa-seccomp, on a file in each of DIR1 and DIR2
   (two bindfs mounts): two posix_fallocate (fd, 0, 4096) on each (the
   second, inside the file, asks about the mount), then
   the marker line "# alternating from here", CALLS (400) calls
   alternating between them, and "# alternating done".  The fallback
   asked each mount about exFAT with a thread of its own and a read of
   /proc/self/mountinfo, remembering one mount only: alternating, almost
   every call started a thread.  glibc starts none.  The .exp runs this
   under strace -f and counts the clones between the markers (written
   with write(2), so that the trace shows them in order); this program
   asserts the calls' answers, and prints the system-wide "processes"
   counter of /proc/stat (noisy: other processes count too).  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

/* The processes the system has made (noisy: other processes count).  */
static long
forks (void)
{
  return (long) t_proc_field ("/proc/stat", "processes ");
}

static void
marker (const char *s)
{
  fflush (stdout);
  write (1, s, strlen (s));
}

int
main (int argc, char **argv)
{
  char path[2][4096];
  int fd[2], bad = 0, last = 0;
  int calls = argc > 3 ? atoi (argv[3]) : 400;

  if (argc < 3)
    {
      fprintf (stderr, "usage: t-fusealt DIR1 DIR2 [CALLS]\n");
      return 2;
    }
  if (!t_filtered ())
    {
      t_unsupported ("fusealt: run it under fa-seccomp");
      return 0;
    }
  for (int i = 0; i < 2; i++)
    {
      fd[i] = t_create (argv[1 + i], "alt", path[i], sizeof path[i]);
      int r = posix_fallocate64 (fd[i], 0, 4096);
      /* The second asks about the mount (a range inside the file).  */
      int r2 = posix_fallocate64 (fd[i], 0, 4096);
      t_ok (r == 0 && r2 == 0 && t_size (fd[i]) == 4096, "fusealt: the "
	    "first two calls on mount %d: 0 (got %d, %d), size 4096", i + 1,
	    r, r2);
    }
  long before = forks ();
  marker ("# alternating from here\n");
  for (int i = 0; i < calls; i++)
    {
      int r = posix_fallocate64 (fd[i % 2], 0, 4096);
      if (r)
	bad++, last = r;
    }
  marker ("# alternating done\n");
  long after = forks ();
  printf ("# /proc/stat processes grew by %ld over %d alternating calls\n",
	  after - before, calls);
  t_ok (bad == 0, "fusealt: %d calls alternating between two mounts: "
	"every one 0 (%d failed, last %d)", calls, bad, last);
  for (int i = 0; i < 2; i++)
    {
      t_ok (t_size (fd[i]) == 4096 && t_alloc (fd[i]) >= 4096,
	    "fusealt: mount %d's file 4096 bytes, allocated (size %lld, "
	    "%lld bytes allocated)", i + 1, (long long) t_size (fd[i]),
	    (long long) t_alloc (fd[i]));
      close (fd[i]);
      unlink (path[i]);
    }
  return t_done ();
}
