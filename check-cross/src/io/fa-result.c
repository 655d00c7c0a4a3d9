#include <errno.h>
#include "fa-internal.h"

int
__fa_result (long ret)
{
  if (ret < 0)
    {
      errno = (int) -ret;
      return -1;
    }
  return 0;
}
