/* t-probe FILE: the C library's own pwrite64 of one byte at 4 GiB + 12 KiB,
   nothing of libfallocate.  cross.exp runs it under the emulator first and
   checks the size from the host: an emulator that cannot run a static
   program, or that passes 64-bit system call arguments wrongly, is then
   reported as such instead of as a wrong stub.  */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  int fd = argc > 1 ? open (argv[1], O_RDWR | O_CREAT | O_TRUNC | O_LARGEFILE, 0644) : -1;

  return fd < 0 || pwrite64 (fd, "x", 1, 0x100003000LL) != 1;
}
