#include <fallocate.h>
#include "fa-internal.h"

int
fallocate64 (int fd, int mode, __off64_t offset, __off64_t len)
{
  return __fa_result (__fa_call (fd, mode, offset, len));
}
