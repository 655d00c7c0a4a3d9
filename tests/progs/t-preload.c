/* t-preload DIR: linked against the system libc only, it binds
   fallocate@GLIBC_2.10, fallocate64, posix_fallocate and posix_fallocate64
   as any program does.  Run under fa-seccomp ENOSYS it reports what each
   call gave; with libfallocate preloaded the posix calls must succeed.
   With S as the second argument the library is expected (else glibc's
   answers, as under FALLOCATE_SHIM_POLICY=off).  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tcheck.h"

static int cancel_fd;

static void
cancel_call (void)
{
  fallocate (cancel_fd, 0, 0, 1);
}

int
main (int argc, char **argv)
{
  char path[4096];
  const char *dir = argc > 1 ? argv[1] : ".";
  int expect_shim = argc > 2 && argv[2][0] == 's';
  int fd = t_create (dir, "preload", path, sizeof path), r, r64;
  const char *who = expect_shim ? "preloaded" : "glibc";

  r = posix_fallocate (fd, 0, 65536);
  t_ok (expect_shim ? r == 0 && t_size (fd) == 65536 : r == ENOSYS,
	"%s posix_fallocate under ENOSYS: %d, size %lld", who, r,
	(long long) t_size (fd));
  r64 = posix_fallocate64 (fd, HI_OFF, SMALL_LEN);
  t_ok (expect_shim ? r64 == 0 && t_size (fd) == HI_OFF + SMALL_LEN
		      && t_nohole (fd, HI_OFF, SMALL_LEN) : r64 == ENOSYS,
	"%s posix_fallocate64 under ENOSYS: %d, size %lld", who, r64,
	(long long) t_size (fd));
  /* fallocate-shim's default fills a refused mode-0 call (over space
     allocated just above: 0); --raw leaves ENOSYS.  */
  const char *policy = getenv ("FALLOCATE_SHIM_POLICY");
  int fills = expect_shim && policy && strcmp (policy, "fill") == 0;
  errno = 0;
  r = fallocate (fd, 0, 0, 1);
  t_ok (fills ? r == 0 : r == -1 && errno == ENOSYS, "%s fallocate: %s", who,
	fills ? "filled, 0" : "no emulation, ENOSYS");
  errno = 0;
  r = fallocate64 (fd, 0, HI_OFF, 1);
  t_ok (fills ? r == 0 : r == -1 && errno == ENOSYS, "%s fallocate64: %s",
	who, fills ? "filled, 0" : "no emulation, ENOSYS");
  /* glibc's fallocate is a cancellation point (and so under the off
     policy); ours is not.  */
  cancel_fd = fd;
  int spare = open ("/dev/null", O_RDONLY);
  if (spare < 0)
    /* glibc's pthread_cancel opens libgcc_s, or aborts.  */
    t_unsupported ("%s fallocate with a cancellation pending: no "
		   "descriptor left for libgcc_s (%s)", who, strerror (errno));
  else if (!expect_shim && t_asan ())
    {
      close (spare);
      t_unsupported ("%s fallocate with a cancellation pending: cancelled "
		     "inside, which ASan cannot follow", who);
    }
  else
    {
      close (spare);
      int reached = t_cancel_pending (cancel_call);
      t_ok (expect_shim ? reached : !reached, "%s fallocate with a "
	    "cancellation pending: %s", who,
	    reached ? "returned" : "cancelled inside");
    }
  close (fd);
  unlink (path);
  return t_done ();
}
