/* t-blind DIR: the fallback on a filesystem that cannot report holes.
   This program defines lseek64 the way generic_file_llseek answers on such
   filesystems (the whole file is data); linked dynamically, it is the
   lseek64 libfallocate calls.  Run under fa-seccomp so the fallback runs.
   Holes must still end up allocated, data unchanged, on O_RDWR and O_WRONLY
   descriptors alike.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

static int blind = 1;

off64_t
lseek64 (int fd, off64_t off, int whence)
{
  struct stat64 st;

  if (blind && (whence == SEEK_DATA || whence == SEEK_HOLE))
    {
      if (fstat64 (fd, &st) < 0)
	return -1;
      if (off >= st.st_size)
	{
	  errno = ENXIO;
	  return -1;
	}
      return whence == SEEK_DATA ? off : st.st_size;
    }
  return syscall (SYS_lseek, fd, off, whence);
}

int
main (int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : ".";
  char path[4096];

  if (!t_filtered ())
    {
      t_unsupported ("t-blind: run it under fa-seccomp");
      return 0;
    }
  for (int wronly = 0; wronly < 2; wronly++)
    {
      const char *how = wronly ? "O_WRONLY" : "O_RDWR";
      int fd = t_create (dir, "blind", path, sizeof path);

      t_put (fd, 0, 65536, 30);
      t_put (fd, 1 << 20, 65536, 31);
      int cfd = wronly ? open (path, O_WRONLY) : fd;
      int r = posix_fallocate64 (cfd, 4096, 2 << 20);
      blind = 0;
      t_ok (r == 0, "hole-blind %s: returns 0 (got %d)", how, r);
      t_ok (t_same (fd, 0, 65536, 30) && t_same (fd, 1 << 20, 65536, 31)
	    && t_zero (fd, 65536, (1 << 20) - 65536)
	    && t_zero (fd, (1 << 20) + 65536, (1 << 20) - 65536 + 4096),
	    "hole-blind %s: data unchanged, the rest zeros", how);
      t_ok (t_size (fd) == (2 << 20) + 4096 && t_nohole (fd, 4096, 2 << 20),
	    "hole-blind %s: size %d, no hole left in range", how, (2 << 20) + 4096);
      blind = 1;
      if (cfd != fd)
	close (cfd);
      close (fd);
      unlink (path);
    }
  return t_done ();
}
