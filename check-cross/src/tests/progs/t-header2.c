/* The other include order for t-header.c.  */
#include <fcntl.h>
#include <linux/falloc.h>
#include <fallocate.h>

void *t_header2_fallocate (void);
void *t_header2_posix_fallocate (void);

void *
t_header2_fallocate (void)
{
  return (void *) fallocate;
}

void *
t_header2_posix_fallocate (void)
{
  return (void *) posix_fallocate;
}
