#include <fallocate.h>
#include "fa-internal.h"

int
posix_fallocate (int fd, off_t offset, off_t len)
{
  return __fa_posix (fd, offset, len);
}
