/* t-syscall DIR [FS]: fallocate and fallocate64 issue the system call with
   the words the kernel expects, return -1 with errno, and never emulate.

   Whether the call must be refused is not asked of the library (a
   library that emulated mode 0 would answer its own question): under
   fa-seccomp, FA_SECCOMP in the environment names the errno every call
   gets; FS, the filesystem's name, says whether it can allocate at all
   (ext2 cannot: EOPNOTSUPP; it can punch holes, mounted by the ext4
   driver).  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

static const char *dir, *fs;
static int filt;
/* What an allocating call (mode 0, KEEP_SIZE) must get, from outside the
   library: an errno, 0 (the filesystem allocates), or -1 (nobody said).  */
static int refusal = -1;

/* From FA_SECCOMP, else from FS.  */
static int
expected_refusal (void)
{
  static const char *const allocating[] = { "ext4", "xfs", "btrfs", "tmpfs" };
  const char *sandbox = getenv ("FA_SECCOMP");

  if (sandbox)
    return strcmp (sandbox, "ENOSYS") == 0 ? ENOSYS
	   : strcmp (sandbox, "EOPNOTSUPP") == 0 ? EOPNOTSUPP : -1;
  /* ext2 by its driver, exfat and ntfs by their FUSE servers.  */
  static const char *const refusing[] = { "ext2", "exfat", "ntfs" };

  for (size_t i = 0; fs && i < sizeof refusing / sizeof *refusing; i++)
    if (strcmp (fs, refusing[i]) == 0)
      return EOPNOTSUPP;
  for (size_t i = 0; fs && i < sizeof allocating / sizeof *allocating; i++)
    if (strcmp (fs, allocating[i]) == 0)
      return 0;
  return -1;
}

/* fallocate64 must fail with WANT; under fa-seccomp every call gets the
   filter's errno, before the kernel looks at anything.  */
static void
fails (const char *what, int fd, int mode, int64_t off, int64_t len, int want)
{
  if (filt && !(fd < 0 && t_valgrind ()))
    want = filt;
  errno = 0;
  int r = fallocate64 (fd, mode, off, len);
  int e = errno;
  t_ok (r == -1 && e == want, "fallocate %s: -1/%d (got %d/%d)", what, want, r, e);
}

static void
errors (void)
{
  char path[4096];
  int fd = t_create (dir, "errors", path, sizeof path), p[2], s;
  int ro = open (path, O_RDONLY), op = open (path, O_PATH);
  int nul = open ("/dev/null", O_WRONLY);

  fails ("bad fd", -1, 0, 0, 1, EBADF);
  fails ("closed fd", 999, 0, 0, 1, EBADF);
  fails ("offset < 0", fd, 0, -1, 1, EINVAL);
  fails ("len 0", fd, 0, HI_OFF, 0, EINVAL);
  fails ("len < 0", fd, 0, HI_OFF, -HI_LEN, EINVAL);
  fails ("unknown mode bit", fd, 0x100, HI_OFF, 1, EOPNOTSUPP);
  fails ("NO_HIDE_STALE", fd, FALLOC_FL_NO_HIDE_STALE | FALLOC_FL_KEEP_SIZE
	 | FALLOC_FL_PUNCH_HOLE, HI_OFF, 1, EOPNOTSUPP);
  fails ("PUNCH_HOLE without KEEP_SIZE", fd, FALLOC_FL_PUNCH_HOLE, HI_OFF, 1,
	 EOPNOTSUPP);
  fails ("PUNCH_HOLE with ZERO_RANGE", fd, FALLOC_FL_PUNCH_HOLE
	 | FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, HI_OFF, 1, EOPNOTSUPP);
  fails ("read-only fd", ro, 0, HI_OFF, SMALL_LEN, EBADF);
  fails ("O_PATH fd", op, 0, HI_OFF, SMALL_LEN, EBADF);
  fails ("offset + len overflows", fd, 0, INT64_MAX - 10, HI_LEN, EFBIG);
  fails ("len overflows", fd, 0, HI_OFF, INT64_MAX, EFBIG);
  if (pipe (p) == 0)
    fails ("pipe", p[1], 0, 0, SMALL_LEN, ESPIPE);
  fails ("/dev/null", nul, 0, 0, SMALL_LEN, ENODEV);
  s = socket (AF_UNIX, SOCK_STREAM, 0);
  fails ("socket", s, 0, 0, SMALL_LEN, ENODEV);
  errno = 0;
  t_ok (fallocate (-1, 0, 0, 1) == -1
	&& errno == (filt && !t_valgrind () ? filt : EBADF),
	"fallocate (off_t) bad fd");
  unlink (path);
}

/* A call either works, or the filesystem refuses the mode: then it must
   say EOPNOTSUPP and leave the file alone.  Where the answer is known
   from outside (for every mode under the sandbox, for the allocating
   ones, ALLOCATING, by the filesystem), it must be that one.  */
static int
refused (const char *what, int r, int64_t size_before, int fd, int allocating)
{
  int e = errno;
  int known = allocating || getenv ("FA_SECCOMP") ? refusal : -1;

  if (known > 0)
    {
      t_ok (r == -1 && e == known && t_size (fd) == size_before,
	    "%s: -1/%d, as %s says, file unchanged (got %d/%d)", what,
	    known, getenv ("FA_SECCOMP") ? "the sandbox" : fs, r, e);
      return 1;
    }
  if (known == 0)
    t_ok (r == 0, "%s: allocates on %s (got %d/%d)", what, fs, r,
	  r ? e : 0);
  if (r == 0)
    return 0;
  t_ok (e == (filt ? filt : EOPNOTSUPP) && t_size (fd) == size_before,
	"%s refused with %s, file unchanged (errno %d)", what,
	filt ? "the filter's errno" : "EOPNOTSUPP", e);
  t_unsupported ("%s: not supported here", what);
  return 1;
}

static void
allocate (void)
{
  char path[4096];
  int fd = t_create (dir, "alloc", path, sizeof path);
  int64_t a0 = t_alloc (fd);

  /* Mode 0 above 4 GiB: the size must be exactly offset + len.  */
  if (!refused ("mode 0 at 4 GiB + 12 KiB",
		fallocate64 (fd, 0, HI_OFF, SMALL_LEN), 0, fd, 1))
    {
      t_ok (t_size (fd) == HI_OFF + SMALL_LEN, "mode 0: size is offset + len (%lld)",
	    (long long) t_size (fd));
      t_ok (t_alloc (fd) - a0 >= SMALL_LEN, "mode 0: len bytes allocated");
      t_ok (t_zero (fd, HI_OFF, SMALL_LEN), "mode 0: range reads as zeros");
    }
  ftruncate (fd, 4096);
  t_put (fd, 0, 4096, 1);
  a0 = t_alloc (fd);
  if (!refused ("KEEP_SIZE at 4 GiB + 12 KiB",
		fallocate64 (fd, FALLOC_FL_KEEP_SIZE, HI_OFF, SMALL_LEN),
		4096, fd, 1))
    {
      t_ok (t_size (fd) == 4096, "KEEP_SIZE: size unchanged");
      t_ok (t_alloc (fd) - a0 >= SMALL_LEN
	    && t_alloc (fd) - a0 < 2 * SMALL_LEN + (1 << 20),
	    "KEEP_SIZE: len bytes allocated (%lld)", (long long) (t_alloc (fd) - a0));
      t_ok (t_same (fd, 0, 4096, 1), "KEEP_SIZE: data unchanged");
    }
  close (fd);
  unlink (path);
}

/* PUNCH_HOLE with a len above 4 GiB: markers just inside and just outside
   both ends tell exactly which range the kernel received.  */
static void
punch (void)
{
  char path[4096];
  int fd = t_create (dir, "punch", path, sizeof path);
  int64_t end = HI_OFF + HI_LEN;

  t_put (fd, HI_OFF - 4096, 4096, 2);
  t_put (fd, HI_OFF, 4096, 3);
  t_put (fd, end - 4096, 4096, 4);
  t_put (fd, end, 4096, 5);
  if (!refused ("PUNCH_HOLE len 4 GiB + 128 KiB",
		fallocate64 (fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			     HI_OFF, HI_LEN), end + 4096, fd, 0))
    {
      t_ok (t_same (fd, HI_OFF - 4096, 4096, 2), "punch: block before offset kept");
      t_ok (t_zero (fd, HI_OFF, 4096), "punch: first block of range zeroed");
      t_ok (t_zero (fd, end - 4096, 4096), "punch: last block of range zeroed");
      t_ok (t_same (fd, end, 4096, 5), "punch: block after offset + len kept");
      t_ok (t_size (fd) == end + 4096, "punch: size unchanged");
    }
  close (fd);
  unlink (path);
}

int
main (int argc, char **argv)
{
  dir = argc > 1 ? argv[1] : ".";
  fs = argc > 2 ? argv[2] : NULL;
  refusal = expected_refusal ();
  filt = t_filtered ();
  if (getenv ("FA_SECCOMP"))
    {
      t_ok (filt == refusal, "fallocate gets the sandbox's %s: errno %d "
	    "(got %d)", getenv ("FA_SECCOMP"), refusal, filt);
      /* The error table too: every call gets the filter's errno.  */
      filt = refusal;
    }
  printf ("# t-syscall in %s%s\n", dir, filt ? " (fallocate filtered)" : "");
  errors ();
  allocate ();
  punch ();
  return t_done ();
}
