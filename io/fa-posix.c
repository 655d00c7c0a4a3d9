#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include "fa-policy.h"

/* posix_fallocate under the policy: the system call first, as glibc; on
   EOPNOTSUPP (the filesystem cannot) and on ENOSYS (the kernel or a
   seccomp filter refuses it, where glibc gives up) the fallback
   (fa-fill.c).  Not a cancellation point, as the kernel's: cancellation
   is off throughout, since the fallback and the trace make calls that
   are (pwrite, open, pthread_join), and a thread cancelled in one would
   leave a lock of ours held or a thread of ours behind.  */
int
__fa_posix (int fd, int64_t off, int64_t len)
{
  int saved = errno, err, cancel;
  const char *how = "";

  if (__fa_policy.action == FA_OFF)
    {
      err = __fa_next_posix ? __fa_next_posix (fd, off, len)
	    : (int) -__fa_syscall (fd, 0, off, len);
      errno = saved;
      return err;
    }
  pthread_setcancelstate (PTHREAD_CANCEL_DISABLE, &cancel);
  if (__fa_policy.action == FA_NOOP)
    err = 0, how = "noop";
  else if (__fa_policy.action == FA_INJECT)
    err = __fa_policy.injected, how = "injected";
  else if ((err = (int) -__fa_syscall (fd, 0, off, len)) == EOPNOTSUPP
	   || err == ENOSYS)
    {
      err = __fa_fill (fd, off, len);
      how = "fallback";
    }
  if (__fa_policy.trace.path[0])
    __fa_trace (&__fa_policy.trace, getpid (), "posix_fallocate", 1, fd, 0,
		off, len, err, how);
  pthread_setcancelstate (cancel, &cancel);
  errno = saved;
  return err;
}
