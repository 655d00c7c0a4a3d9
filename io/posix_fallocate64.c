#include <fallocate.h>
#include "fa-internal.h"

int
posix_fallocate64 (int fd, __FA_OFF64 offset, __FA_OFF64 len)
{
  return __fa_posix (fd, offset, len);
}
