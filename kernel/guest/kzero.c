/* kzero KIND FS DIR [emulate]: FALLOC_FL_WRITE_ZEROES through
   libfallocate's fallocate, in the VM of make check-kernel.  Linked
   static against libfallocate.a; run as it is (policy pass) and under
   FALLOCATE_SHIM_POLICY=emulate (the last argument says which), on ext2
   and ext4, with FALLOCATE_SHIM_TRACE set by kernel/guest/init.

   One call over a file of data, an allocated range (unwritten extents on
   ext4), a hole and more data, from the middle of a block to past the
   end of file.  Pass: the kernel's answer, unchanged: on the patched
   ext4 0 and the kernel's result, EOPNOTSUPP elsewhere (the stock
   kernel, ext2), and the file as it was.  Emulate: 0 everywhere, and the
   same result as the patched ext4's: the range reads zeros, the bytes
   before it are kept, the size is the range's end, and FIEMAP maps the
   whole range written (no hole, no unwritten extent).  The trace line
   says the mode went through as WRITE_ZEROES, and who did it.

   Prints "PASS: ...", "FAIL: ..." and "# ..." lines; exits 1 if
   anything failed.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef FALLOC_FL_WRITE_ZEROES
# define FALLOC_FL_WRITE_ZEROES 0x80
#endif
#define KiB 1024LL

#include "kok.h"

static void
fill (int fd, int64_t off, size_t n, int c)
{
  static char b[64 * 1024];

  memset (b, c, sizeof b);
  for (size_t done = 0; done < n; done += sizeof b)
    if (pwrite (fd, b, sizeof b, off + (int64_t) done) != sizeof b)
      {
	printf ("FAIL: pwrite: %s\n", strerror (errno));
	exit (1);
      }
}

/* 1 if bytes OFF..OFF+N all read C.  */
static int
all (int fd, int64_t off, int64_t n, int c)
{
  static unsigned char b[64 * 1024];

  for (int64_t done = 0; done < n;)
    {
      size_t k = n - done < (int64_t) sizeof b ? (size_t) (n - done) : sizeof b;
      if (pread (fd, b, k, off + done) != (ssize_t) k)
	return 0;
      for (size_t i = 0; i < k; i++)
	if (b[i] != c)
	  return 0;
      done += k;
    }
  return 1;
}

/* Bytes of [OFF, OFF + LEN) that FIEMAP maps (after writeback), and the
   number of unwritten extents among those, in *UNWRITTEN.  */
static int64_t
mapped (int fd, int64_t off, int64_t len, int *unwritten)
{
  struct { struct fiemap f; struct fiemap_extent e[512]; } m;
  int64_t n = 0;

  memset (&m, 0, sizeof m);
  m.f.fm_start = off;
  m.f.fm_length = len;
  m.f.fm_flags = FIEMAP_FLAG_SYNC;
  m.f.fm_extent_count = 512;
  *unwritten = -1;
  if (ioctl (fd, FS_IOC_FIEMAP, &m.f))
    return -1;
  *unwritten = 0;
  for (unsigned i = 0; i < m.f.fm_mapped_extents; i++)
    {
      int64_t lo = m.e[i].fe_logical, hi = lo + (int64_t) m.e[i].fe_length;
      lo = lo < off ? off : lo;
      hi = hi > off + len ? off + len : hi;
      if (hi > lo)
	{
	  n += hi - lo;
	  *unwritten += (m.e[i].fe_flags & FIEMAP_EXTENT_UNWRITTEN) != 0;
	}
    }
  return n;
}

static int64_t
fsize (int fd)
{
  struct stat st;
  return fstat (fd, &st) ? -1 : st.st_size;
}

int
main (int argc, char **argv)
{
  if (argc < 4)
    {
      fprintf (stderr, "usage: kzero stock|patched FS DIR [emulate]\n");
      return 2;
    }
  int patched = strcmp (argv[1], "patched") == 0;
  const char *fs = argv[2], *dir = argv[3];
  int emulate = argc > 4 && strcmp (argv[4], "emulate") == 0;
  int kernel = patched && strcmp (fs, "ext4") == 0;
  const char *pol = emulate ? "emulate" : "pass";
  char path[4096];
  int fd, e, r, uw, want = kernel || emulate ? 0 : EOPNOTSUPP;

  snprintf (path, sizeof path, "%s/k-zero", dir);
  unlink (path);
  fd = open (path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    {
      printf ("FAIL: open %s: %s\n", path, strerror (errno));
      return 1;
    }
  /* Data 0..64K, allocated 64K..128K (by the raw system call: unwritten
     on ext4; ext2 stock refuses, a hole), a hole to 192K, data to 256K.  */
  fill (fd, 0, 64 * KiB, 'a');
  syscall (SYS_fallocate, fd, 0, 64 * KiB, 64 * KiB);
  fill (fd, 192 * KiB, 64 * KiB, 'b');
  fsync (fd);

  int64_t off = 4096 + 100, end = 320 * KiB;
  errno = 0;
  r = fallocate (fd, FALLOC_FL_WRITE_ZEROES, off, end - off);
  e = r ? errno : 0;
  ok (e == want, "%s: fallocate WRITE_ZEROES through libfallocate: %s "
      "(got %d, %s)", pol, want ? "EOPNOTSUPP" : "0", r, e ? strerror (e)
      : "0");
  if (!want && !e)
    {
      int64_t bs = 4096, lo = (off + bs - 1) / bs * bs;
      int64_t m = mapped (fd, lo, end - lo, &uw);
      ok (fsize (fd) == end && all (fd, 0, off, 'a')
	  && all (fd, off, end - off, 0), "%s: the range reads zeros, the "
	  "bytes before it are kept, size %lld (the range's end)", pol,
	  (long long) fsize (fd));
      ok (m == end - lo && uw == 0, "%s: the range is written (FIEMAP: "
	  "%lld of %lld bytes mapped, %d unwritten extents)", pol,
	  (long long) m, (long long) (end - lo), uw);
    }
  else
    ok (fsize (fd) == 256 * KiB && all (fd, 0, 64 * KiB, 'a')
	&& all (fd, 64 * KiB, 128 * KiB, 0) && all (fd, 192 * KiB, 64 * KiB, 'b'),
	"%s: refused, the file unchanged", pol);

  /* The trace: the mode as given, and who answered.  */
  const char *t = getenv ("FALLOCATE_SHIM_TRACE");
  char line[512] = "", l[512];
  FILE *f = t ? fopen (t, "r") : NULL;
  while (f && fgets (l, sizeof l, f))
    if (strstr (l, " fallocate("))
      snprintf (line, sizeof line, "%s", l);
  if (f)
    fclose (f);
  line[strcspn (line, "\n")] = 0;
  const char *how = emulate && !kernel ? " (emulated)" : "";
  char w[128];
  snprintf (w, sizeof w, ", WRITE_ZEROES, %lld, %lld) = %s%s",
	    (long long) off, (long long) (end - off),
	    want ? "-1 EOPNOTSUPP" : "0", how);
  size_t lw = strlen (w), ll = strlen (line);
  ok (ll >= lw && strcmp (line + ll - lw, w) == 0, "%s: the trace says "
      "\"...%s\" (%s)", pol, w, line);
  close (fd);
  unlink (path);
  return failed;
}
