/* t-compat DIR [big]: posix_fallocate64 called as a 32-bit glibc program
   binds it.  Built with -DLEN32, through posix_fallocate64@GLIBC_2.2 (len
   an off_t) with one more word after len: a callee that read len as 64
   bits would take that word as its high half.  Otherwise through
   posix_fallocate64@GLIBC_2.3.3; "big" makes len 4 GiB + 128 KiB.
   Linked against glibc only: libfallocate comes in with LD_PRELOAD.  */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#define OFF 0x100003000LL		/* 4 GiB + 12 KiB */

#ifdef LEN32
int old_pf64 (int, int64_t, int32_t, int32_t);
__asm__ (".symver old_pf64, posix_fallocate64@GLIBC_2.2");
# define CALL(fd, off, len) old_pf64 (fd, off, (int32_t) (len), 0x5a5a)
# define VERSION "GLIBC_2.2"
#else
int new_pf64 (int, int64_t, int64_t);
__asm__ (".symver new_pf64, posix_fallocate64@GLIBC_2.3.3");
# define CALL(fd, off, len) new_pf64 (fd, off, len)
# define VERSION "GLIBC_2.3.3"
#endif

int
main (int argc, char **argv)
{
  char path[4096];
  struct stat64 st;
  int64_t len = argc > 2 ? 0x100020000LL : 0x20000;

  snprintf (path, sizeof path, "%s/compat", argc > 1 ? argv[1] : ".");
  int fd = open (path, O_RDWR | O_CREAT | O_TRUNC | O_LARGEFILE, 0644);
  int r = CALL (fd, OFF, len);
  int ok = fd >= 0 && r == 0 && fstat64 (fd, &st) == 0
    && st.st_size == OFF + len;
  printf ("%s: posix_fallocate64@%s offset %#llx len %#llx: size is offset "
	  "+ len (returned %d, size %lld)\n", ok ? "PASS" : "FAIL", VERSION,
	  OFF, (long long) len, r, (long long) st.st_size);
  unlink (path);
  return !ok;
}
