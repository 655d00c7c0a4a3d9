/* t-kinds raw|posix BLK DIR: what a mode-0 call answers for each kind of
   file, by fallocate () (raw) or posix_fallocate (posix), as the kernel
   answers the system call and glibc posix_fallocate:

     kind                        raw          posix
     block device BLK            EOPNOTSUPP   ENODEV
     character device /dev/null  ENODEV       ENODEV
     FIFO in DIR                 ESPIPE       ESPIPE
     socket                      ENODEV       ENODEV
     /proc/self/mem              EOPNOTSUPP   EOPNOTSUPP
     memfd_secret                EOPNOTSUPP   EOPNOTSUPP
     directory DIR (read-only)   EBADF        EBADF
     regular file in DIR         0 (where the filesystem or a fallback
                                   allocates)

   with BLK's data and the process's memory unchanged (glibc's fallback
   writes zeros into /proc/self/mem; ours wrote into the block device's
   place in the answer, and into a supervised caller's memory).  BLK
   "-": no block device.  Run supervised (raw), preloaded, linked, and
   under fa-seccomp ENOSYS.  Built with the library or without it (the
   preload's test): only <fcntl.h>'s names.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "tcheck.h"

static int raw;

/* The call's error number.  */
static int
call (int fd, int64_t off, int64_t len)
{
  if (!raw)
    return posix_fallocate (fd, off, len);
  return fallocate (fd, 0, off, len) < 0 ? errno : 0;
}

static void
expect (const char *kind, int fd, int64_t off, int want)
{
  int got = fd < 0 ? -1 : call (fd, off, 65536);

  t_ok (got == want, "%s: %s (got %s)", kind, want ? strerror (want) : "0",
	got < 0 ? "no descriptor" : got ? strerror (got) : "0");
  if (fd >= 0)
    close (fd);
}

int
main (int argc, char **argv)
{
  char path[4096];
  int sv[2];

  if (argc != 4)
    {
      fprintf (stderr, "usage: t-kinds raw|posix BLK DIR\n");
      return 2;
    }
  raw = strcmp (argv[1], "raw") == 0;
  const char *dir = argv[3];

  if (strcmp (argv[2], "-") == 0)
    t_unsupported ("block device: none given");
  else
    {
      int fd = open (argv[2], O_RDWR);
      static unsigned char before[65536], after[65536];

      t_put (fd, 4096, sizeof before, 7);
      pread (fd, before, sizeof before, 4096);
      expect ("block device", dup (fd), 4096, raw ? EOPNOTSUPP : ENODEV);
      /* NO_HIDE_STALE is refused before a block device sees it
	 (<fallocate.h>), its discard with it.  */
      errno = 0;
      long r = syscall (SYS_fallocate, fd, FALLOC_FL_PUNCH_HOLE
			| FALLOC_FL_KEEP_SIZE | FALLOC_FL_NO_HIDE_STALE,
			(off_t) 4096, (off_t) 65536);
      int err = errno, filtered = t_filtered ();

      t_ok (r == -1 && err == (filtered ? filtered : EOPNOTSUPP),
	    "block device: PUNCH_HOLE | KEEP_SIZE | NO_HIDE_STALE refused "
	    "by the kernel, or the filter (%s)", r == 0 ? "0" : strerror (err));
      pread (fd, after, sizeof after, 4096);
      t_ok (memcmp (before, after, sizeof before) == 0,
	    "block device: its data unchanged");
      close (fd);
    }
  expect ("character device", open ("/dev/null", O_RDWR), 0, ENODEV);
  snprintf (path, sizeof path, "%s/kinds-fifo", dir);
  unlink (path);
  mkfifo (path, 0600);
  expect ("FIFO", open (path, O_RDWR), 0, ESPIPE);
  unlink (path);
  if (socketpair (AF_UNIX, SOCK_STREAM, 0, sv) < 0)
    sv[0] = sv[1] = -1;
  expect ("socket", sv[0], 0, ENODEV);
  close (sv[1]);

  /* Three pages of a pattern; the call over the middle one.  Below 2
     GiB: procfs's largest file (the kernel's EFBIG above).  */
  long page = sysconf (_SC_PAGESIZE);
  unsigned char *mem = MAP_FAILED;
  for (uintptr_t at = 0x40000000; mem == MAP_FAILED && at < 0x7f000000;
       at += 0x1000000)
    {
      mem = mmap ((void *) at, 3 * page, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
      if (mem != MAP_FAILED && mem != (void *) at)
	{
	  munmap (mem, 3 * page);
	  mem = MAP_FAILED;
	}
    }
  int fd;
  if (mem == MAP_FAILED || (uintptr_t) mem >= 0x7f000000)
    t_unsupported ("/proc/self/mem: no mapping could be had below 2 GiB");
  else
    {
      memset (mem, 0x5a, 3 * page);
      fd = open ("/proc/self/mem", O_RDWR);
      int got = call (fd, (int64_t) (uintptr_t) (mem + page), page);
      close (fd);
      t_ok (got == EOPNOTSUPP, "/proc/self/mem: %s (got %s)",
	    strerror (EOPNOTSUPP), got ? strerror (got) : "0");
      int same = 1;
      for (long i = 0; i < 3 * page; i++)
	same &= mem[i] == 0x5a;
      t_ok (same, "/proc/self/mem: the memory unchanged");
    }

#ifdef SYS_memfd_secret
  fd = (int) syscall (SYS_memfd_secret, 0);
  if (fd < 0)
    t_unsupported ("memfd_secret: %s", strerror (errno));
  else
    expect ("memfd_secret", fd, 0, EOPNOTSUPP);
#else
  t_unsupported ("memfd_secret: no system call number here");
#endif
  expect ("directory", open (dir, O_RDONLY | O_DIRECTORY), 0, EBADF);
  fd = t_create (dir, "kinds-file", path, sizeof path);
  expect ("regular file", dup (fd), 0, 0);
  t_ok (t_size (fd) == 65536, "regular file: its size the range's end");
  close (fd);
  unlink (path);
  return t_done ();
}
