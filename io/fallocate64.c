#include <fallocate.h>
#include "fa-internal.h"

int
fallocate64 (int fd, int mode, __FA_OFF64 offset, __FA_OFF64 len)
{
  return __fa_result (__fa_call (fd, mode, offset, len));
}
