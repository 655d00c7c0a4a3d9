#include <fallocate.h>
#include "fa-internal.h"

int
fallocate64 (int fd, int mode, __off64_t offset, __off64_t len)
{
  /* The test inline: the system call's path costs what glibc's does.  */
  return __fa_result (__fa_passthrough
		      ? __fa_syscall (fd, mode, offset, len)
		      : __fa_fallocate (fd, mode, offset, len));
}
