/* fa-seccomp ERRNO COMMAND [ARGS...]: run COMMAND where the fallocate
   system call fails with ERRNO (ENOSYS: a kernel or sandbox without it;
   EOPNOTSUPP: a filesystem without it); ERRNO EPERM:pidfd_getfd, where
   pidfd_getfd fails with EPERM instead (a container's profile without
   CAP_SYS_PTRACE), x86_64 only.  The filter is inherited across
   exec and fork, needs no privilege, and also catches the calls qemu-user
   makes on behalf of a guest.  FA_SECCOMP=ERRNO goes into COMMAND's
   environment: what fallocate must answer there is then known from
   outside the library under test, which could otherwise vouch for a
   refusal it emulated away.  */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fa-deny.h"

int
main (int argc, char **argv)
{
  unsigned int err = 0;
  int r;

  if (argc < 3)
    {
      fprintf (stderr, "usage: fa-seccomp ENOSYS|EOPNOTSUPP|EPERM:pidfd_getfd "
	       "COMMAND [ARGS...]\n");
      return 2;
    }
  if (strcmp (argv[1], "ENOSYS") == 0)
    err = ENOSYS;
  else if (strcmp (argv[1], "EOPNOTSUPP") == 0)
    err = EOPNOTSUPP;
  else if (strcmp (argv[1], "EPERM:pidfd_getfd") != 0)
    {
      fprintf (stderr, "fa-seccomp: unknown errno %s\n", argv[1]);
      return 2;
    }

  if (err && setenv ("FA_SECCOMP", argv[1], 1) < 0)
    {
      perror ("fa-seccomp: setenv");
      return 126;
    }
  r = err ? fa_deny_fallocate (err) : fa_deny_pidfd_getfd ();
  if (r < 0)
    {
      perror ("fa-seccomp: prctl");
      return 126;
    }
  execvp (argv[2], argv + 2);
  fprintf (stderr, "fa-seccomp: %s: %s\n", argv[2], strerror (errno));
  return 127;
}
