#include <fallocate.h>
#include "fa-internal.h"

int
posix_fallocate64 (int fd, __off64_t offset, __off64_t len)
{
  return __fa_posix (fd, offset, len);
}
