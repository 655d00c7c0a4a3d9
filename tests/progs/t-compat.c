/* t-compat DIR [big|wide]: posix_fallocate64 called as a 32-bit glibc
   program binds it.  Built with -DLEN32, through posix_fallocate64@GLIBC_2.2
   (len a size_t: 32 bits, unsigned) with one more word after len: a callee
   that read len as 64 bits would take that word as its high half.
   Otherwise through posix_fallocate64@GLIBC_2.3.3; "big" makes len 4 GiB +
   128 KiB.  Linked against glibc only: libfallocate comes in with
   LD_PRELOAD, and without it the same checks give glibc's own answers.

   "wide" (LEN32): lengths of 2 GiB and more, whose top bit a callee that
   read len as a signed 32-bit off_t would take for a sign, returning
   EINVAL where glibc, zero-extending, allocates 2 GiB or (past the
   largest offset) says EFBIG.  sysdeps/unix/sysv/linux/compat-glibc-2.2/
   posix_fallocate64-l32.c is shared by every port with this version (i386,
   mips o32 and n32, powerpc32, s390-31, hppa, m68k, sh): i386 is the one
   that runs here with a glibc to compare with, so this checks them all.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OFF 0x100003000LL		/* 4 GiB + 12 KiB */

#ifdef LEN32
int old_pf64 (int, int64_t, uint32_t, int32_t);
__asm__ (".symver old_pf64, posix_fallocate64@GLIBC_2.2");
# define CALL(fd, off, len) old_pf64 (fd, off, (uint32_t) (len), 0x5a5a)
# define VERSION "GLIBC_2.2"
#else
int new_pf64 (int, int64_t, int64_t);
__asm__ (".symver new_pf64, posix_fallocate64@GLIBC_2.3.3");
# define CALL(fd, off, len) new_pf64 (fd, off, len)
# define VERSION "GLIBC_2.3.3"
#endif

static int failed;

/* posix_fallocate64 (OFF, LEN) on a new file DIR/compat: it must return
   WANT, and on success leave the size at OFF + LEN with at least LEN
   bytes allocated, on failure the file empty.  */
static void
check (const char *dir, int64_t off, int64_t len, int want)
{
  char path[4096];
  struct stat64 st;

  snprintf (path, sizeof path, "%s/compat", dir);
  int fd = open (path, O_RDWR | O_CREAT | O_TRUNC | O_LARGEFILE, 0644);
  int r = CALL (fd, off, len);
  int ok = fd >= 0 && fstat64 (fd, &st) == 0;
  int64_t size = ok ? st.st_size : -1, alloc = ok ? st.st_blocks * 512 : -1;
  ok = ok && r == want;
  if (want == 0)
    ok = ok && size == off + len && alloc >= len;
  else
    ok = ok && size == 0;
  printf ("%s: posix_fallocate64@%s offset %#llx len %#llx returns %s "
	  "(returned %d %s, size %lld, allocated %lld)\n",
	  ok ? "PASS" : "FAIL", VERSION, (long long) off, (long long) len,
	  want ? strerror (want) : "0, size offset + len, len allocated",
	  r, r > 0 ? strerror (r) : "", (long long) size, (long long) alloc);
  failed |= !ok;
  if (fd >= 0)
    close (fd);
  unlink (path);
}

int
main (int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : ".";
  const char *what = argc > 2 ? argv[2] : "";

  if (strcmp (what, "wide") == 0)
    {
      /* 2 GiB, as glibc does it (signed: -2 GiB, EINVAL).  */
      check (dir, OFF, 0x80000000LL, 0);
      /* 4 GiB - 4 KiB (signed: -4 KiB, EINVAL) where offset + len passes
	 the largest file offset: the kernel's EFBIG, on every filesystem,
	 with nothing allocated.  */
      check (dir, 0x7fffffffffff0000LL, 0xfffff000LL, EFBIG);
    }
  else
    check (dir, OFF, strcmp (what, "big") == 0 ? 0x100020000LL : 0x20000, 0);
  return failed;
}
