#include <fallocate.h>
#include "fa-internal.h"

int
fallocate (int fd, int mode, off_t offset, off_t len)
{
  return __fa_result (__fa_call (fd, mode, offset, len));
}
