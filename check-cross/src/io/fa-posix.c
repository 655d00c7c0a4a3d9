/* posix_fallocate: the system call with mode 0, and allocation by writing
   zeros where the filesystem (EOPNOTSUPP) or the kernel or a sandbox
   (ENOSYS) cannot do it.  glibc falls back on EOPNOTSUPP only, so under a
   seccomp policy that denies fallocate it fails; we do not.  */
#include <errno.h>
#include "fa-internal.h"

int
__fa_posix (int fd, int64_t offset, int64_t len)
{
  int saved = errno;
  long ret = __fa_syscall (fd, 0, offset, len);
  int err = (int) -ret;

  if (err == EOPNOTSUPP || err == ENOSYS)
    err = __fa_fill (fd, offset, len);
  errno = saved;
  return err;
}
