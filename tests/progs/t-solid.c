/* t-solid DIR [limit]: exfat-fuse (DIR on it) is known to have no holes
   by its device's boot sector, read in __fa_aside's thread (fa-holes.c's
   __fa_solid), and the answer kept for the mount's life.  Under fa-seccomp
   EOPNOTSUPP (the fallback), on a file of 8 MiB of data, a call over
   it finds no hole to fill: it reads and writes nothing (rchar and
   wchar of /proc/self/io, about 1 KiB of /proc reads).  With "limit",
   the first call is made with RLIMIT_AS too low for a thread's stack
   (__fa_aside answers ENOMEM), the limit then set back: the second
   call must read and write no block all the same (the failure kept as
   "can have holes" made it read every block: 2052 reads).  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

#define LEN (8 << 20)

static long
vm_size (void)
{
  long long kib = t_proc_field ("/proc/self/status", "VmSize:");

  return kib < 0 ? -1 : (long) kib * 1024;
}

int
main (int argc, char **argv)
{
  char path[4096];
  int limit = argc == 3 && strcmp (argv[2], "limit") == 0;

  if (argc < 2)
    return 2;
  int fd = t_create (argv[1], "solid", path, sizeof path);
  t_put (fd, 0, LEN, 3);
  fsync (fd);
  if (limit)
    {
      struct rlimit old, low;
      getrlimit (RLIMIT_AS, &old);
      low = old;
      low.rlim_cur = (rlim_t) vm_size () + (1 << 20);
      setrlimit (RLIMIT_AS, &low);
      int r = posix_fallocate (fd, 0, LEN);
      setrlimit (RLIMIT_AS, &old);
      printf ("# the first call, RLIMIT_AS at %ld: %d\n",
	      (long) low.rlim_cur, r);
    }
  long long r0 = t_proc_field ("/proc/self/io", "syscr: ");
  long long w0 = t_proc_field ("/proc/self/io", "syscw: ");
  int r = posix_fallocate (fd, 0, LEN);
  long long r1 = t_proc_field ("/proc/self/io", "syscr: ");
  long long w1 = t_proc_field ("/proc/self/io", "syscw: ");
  t_ok (r1 - r0 < 256 && w1 - w0 < 256,
	"%s: no block read or written, the file known to have no holes "
	"(%lld reads, %lld writes)",
	limit ? "after a call without threads" : "first call",
	r1 - r0, w1 - w0);
  t_ok (r == 0, "%s: posix_fallocate over 8 MiB of data returns 0 (%d)",
	limit ? "after a call without threads" : "first call", r);
  t_ok (t_same (fd, 0, LEN, 3), "the data unchanged");
  close (fd);
  unlink (path);
  return t_done ();
}
