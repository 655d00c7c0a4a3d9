/* libFuzzer harness over posix_fallocate's fallback (__fa_fill), built
   with fa-fill.c compiled in, its pwrite64 and madvise renamed to the
   ones here (-Dpwrite64=fuzz_pwrite64 -Dmadvise=fuzz_madvise) so that the
   input also chooses the way (mapping, or writing as on a kernel without
   MADV_POPULATE_WRITE) and a write that fails.

   Input: a flags byte, up to 8 data segments (offset, length: 2 bytes
   each, in KiB/bytes inside a 1 MiB window), a size to truncate to, then
   the call's offset and length, each 4 bytes, or 8 bytes raw with the
   RAW flag (argument validation).  The file is a memfd.

   Invariants: raw arguments get the kernel's errno (EINVAL, EFBIG);
   a call in the window returns 0 or the injected error; the size is the
   larger of the old size and the end on success, the old size on
   failure; every data byte is unchanged, every other byte zero; on
   success no hole is left in the range.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "fa-internal.h"

#define WIN (1 << 20)
#define F_WRITING 1		/* madvise knows no MADV_POPULATE_WRITE */
#define F_FAULT 2		/* a write fails (EIO) */
#define F_WRONLY 4		/* call through an O_WRONLY descriptor */
#define F_HIGH 8		/* the window at 4 GiB + 12 KiB */
#define F_RAW 16		/* offset and len taken as they come */

static int flags, fault_at, writes, armed;

/* An invariant broken: say which, and crash for libFuzzer.  */
#define must(cond)							\
  do									\
    if (!(cond))							\
      {									\
	fprintf (stderr, "fuzz-fill: %s\n", #cond);			\
	abort ();							\
      }									\
  while (0)
static unsigned char model[WIN], buf[WIN];

ssize_t fuzz_pwrite64 (int fd, const void *b, size_t n, off64_t off);
int fuzz_madvise (void *addr, size_t len, int advice);

ssize_t
fuzz_pwrite64 (int fd, const void *b, size_t n, off64_t off)
{
  if (armed && n > 0 && (flags & F_FAULT) && ++writes == fault_at)
    {
      errno = EIO;
      return -1;
    }
  return syscall (SYS_pwrite64, fd, b, n, off);
}

int
fuzz_madvise (void *addr, size_t len, int advice)
{
  if ((flags & F_WRITING) && advice == MADV_POPULATE_WRITE)
    {
      errno = EINVAL;
      return -1;
    }
  return (int) syscall (SYS_madvise, addr, len, advice);
}

static uint64_t
take (const uint8_t **p, size_t *n, int bytes)
{
  uint64_t v = 0;

  for (int i = 0; i < bytes && *n > 0; i++, (*p)++, (*n)--)
    v |= (uint64_t) **p << (8 * i);
  return v;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static int fd = -1;
  int64_t base, msize = 0;
  int cfd, r;

  if (fd < 0)
    fd = memfd_create ("fuzz-fill", 0);
  must (fd >= 0 && ftruncate (fd, 0) == 0);
  flags = (int) take (&data, &size, 1);
  fault_at = (int) take (&data, &size, 1) % 8 + 1;
  writes = 0;
  base = (flags & F_HIGH) ? 0x100003000LL : 0;
  memset (model, 0, sizeof model);

  int nseg = (int) take (&data, &size, 1) % 9;
  for (int i = 0; i < nseg; i++)
    {
      int64_t off = (int64_t) take (&data, &size, 2) * 16 % WIN;
      int64_t len = (int64_t) take (&data, &size, 2) % 65536 + 1;
      if (off + len > WIN)
	len = WIN - off;
      for (int64_t j = 0; j < len; j++)
	model[off + j] = (unsigned char) ((off + j) % 251 + 1);
      must (pwrite64 (fd, model + off, (size_t) len, base + off) == len);
      if (off + len > msize)
	msize = off + len;
    }
  if (take (&data, &size, 1) & 1)
    {
      int64_t t = (int64_t) take (&data, &size, 3) % (WIN + 1);
      if (t < msize)
	memset (model + t, 0, (size_t) (msize - t));
      msize = t;
    }
  must (ftruncate64 (fd, base + msize) == 0);

  int64_t off, len;
  if (flags & F_RAW)
    {
      off = (int64_t) take (&data, &size, 8);
      len = (int64_t) take (&data, &size, 8);
      int want = off < 0 || len <= 0 ? EINVAL
		 : off > INT64_MAX - len ? EFBIG : -1;
      if (want < 0)
	return 0;		/* valid: the window cases below cover it */
      must (__fa_fill (fd, off, len) == want);
      return 0;
    }
  off = (int64_t) take (&data, &size, 4) % WIN;
  len = (int64_t) take (&data, &size, 4) % (WIN - off) + 1;

  char path[64];
  snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
  cfd = (flags & F_WRONLY) ? open (path, O_WRONLY) : fd;
  must (cfd >= 0);
  armed = 1;
  r = __fa_fill (cfd, base + off, len);
  armed = 0;
  if (cfd != fd)
    close (cfd);
  must (r == 0 || (r == EIO && (flags & F_FAULT)));

  struct stat64 st;
  int64_t end = off + len, want = r == 0 && end > msize ? end : msize;
  must (fstat64 (fd, &st) == 0 && st.st_size == base + want);
  must (pread64 (fd, buf, (size_t) want, base) == want);
  must (memcmp (buf, model, (size_t) want) == 0);
  must (r != 0 || lseek64 (fd, base + off, SEEK_HOLE) >= base + end);
  return 0;
}
