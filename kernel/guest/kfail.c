/* kfail KIND eio|oversize DIR: ext2's fallocate mode 0 (patch 1) when it
   cannot succeed, on the ext2 filesystem mounted at DIR in the VM of make
   check-kernel, whose kernel is KIND (stock or patched).  Raw system
   calls only.

   eio: DIR's disk (kernel/vm's ext2-eio) fails every write from the first
   write zeroes request on, and ext2 makes the first one.  Free blocks
   hold a deleted file's pattern; mode 0 over a file with holes inside,
   the block that straddles its end of file among them, must fail (EIO),
   and then no block mapped inside the file may hold the deleted data:
   the caller who got the error would read another user's deleted data
   there.  Read from the device past its page cache, and through the file.

   oversize: a request larger than the free space must fail with ENOSPC
   without writing that space (patch 1 counts before it allocates): the
   device's written sectors (/sys/block/DEV/stat) stay below 1/16 of the
   free space; size, allocation, free space and bytes stay as they were.

   The stock kernel refuses both with EOPNOTSUPP.  Prints "PASS: ...",
   "FAIL: ..." and "# ..." lines; exits 1 if anything failed.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KiB 1024LL
#define MiB (1024 * KiB)
/* The deleted file's tag, and the kept data's.  */
enum { DELETED = 41, DATA = 42 };

static const char *dir;
static int patched;

#include "kok.h"
#include "kfile.h"

static int
falloc (int fd, int mode, int64_t off, int64_t len)
{
  errno = 0;
  return syscall (SYS_fallocate, fd, mode, (long) off, (long) len) ? errno : 0;
}

/* The block device mounted where DIR is, from /proc/mounts, in DEV.  */
static int
device_of (char *dev, size_t n)
{
  struct stat d, m;
  char line[1024], src[512], mnt[512];
  FILE *f = fopen ("/proc/mounts", "r");
  int found = 0;

  if (!f || stat (dir, &d))
    return 0;
  while (!found && fgets (line, sizeof line, f))
    found = sscanf (line, "%511s %511s", src, mnt) == 2 && src[0] == '/'
	    && stat (mnt, &m) == 0 && m.st_dev == d.st_dev
	    && (size_t) snprintf (dev, n, "%s", src) < n;
  fclose (f);
  return found;
}

/* Blocks of BS bytes of the device DEVFD, from byte PHYS on, N bytes,
   read past the page cache, that hold the pattern TAG.  -1 if a read
   failed.  */
static int64_t
tagged (int devfd, int64_t phys, int64_t n, int64_t bs, unsigned tag)
{
  static unsigned char b[1 << 20] __attribute__ ((aligned (4096)));
  int64_t count = 0;

  for (int64_t at = 0; at < n;)
    {
      int64_t k = n - at < (int64_t) sizeof b ? n - at : (int64_t) sizeof b;
      if (pread (devfd, b, k, phys + at) != k)
	return -1;
      for (int64_t j = 0; j + bs <= k; j += bs)
	{
	  uint64_t v;
	  memcpy (&v, b + j, 8);
	  count += (v >> 40) == tag;
	}
      at += k;
    }
  return count;
}

/* The blocks mapped in [0, LEN) of FD (FIEMAP, without writing anything
   back: the disk fails writes), in *MAPPED, and how many of them hold
   the pattern TAG on the device DEVFD, in *STALE.  0, or -1.  */
static int
stale_mapped (int fd, int devfd, int64_t len, int64_t bs, unsigned tag,
	      int64_t *mapped, int64_t *stale)
{
  static struct { struct fiemap f; struct fiemap_extent e[512]; } m;

  *mapped = *stale = 0;
  memset (&m, 0, sizeof m);
  m.f.fm_start = 0;
  m.f.fm_length = len;
  m.f.fm_extent_count = 512;
  if (ioctl (fd, FS_IOC_FIEMAP, &m.f))
    return -1;
  for (unsigned i = 0; i < m.f.fm_mapped_extents; i++)
    {
      struct fiemap_extent *e = &m.e[i];
      int64_t n = (int64_t) e->fe_length;
      if ((int64_t) e->fe_logical + n > len)
	n = len - (int64_t) e->fe_logical;
      n = (n + bs - 1) / bs * bs;
      int64_t k = tagged (devfd, e->fe_physical, n, bs, tag);
      if (k < 0)
	return -1;
      *mapped += n / bs;
      *stale += k;
    }
  return 0;
}

static void
eio (void)
{
  char dev[512], path[4096], ppath[4096];
  struct statvfs v;
  int fd, devfd, e;
  int64_t len, bs, size, mapped = 0, stale = 0;

  if (!device_of (dev, sizeof dev)
      || (devfd = open (dev, O_RDONLY | O_DIRECT)) < 0)
    {
      ok (0, "eio: the device of %s opens", dir);
      return;
    }
  statvfs (dir, &v);
  bs = v.f_frsize;
  /* The deleted data: 3/4 of the free space.  */
  fd = create ("k-deleted", ppath);
  len = ((int64_t) v.f_bavail * v.f_frsize * 3 / 4) & ~(64 * KiB - 1);
  put (fd, 0, len, DELETED);
  fsync (fd);
  close (fd);
  unlink (ppath);
  sync ();
  int64_t left = tagged (devfd, 0, (int64_t) v.f_blocks * bs, bs, DELETED);
  ok (left * bs >= len / 2, "eio: the deleted file's %lld KiB left in free "
      "blocks (%lld KiB)", (long long) (len / KiB),
      (long long) (left * bs / KiB));

  /* Data, a hole of 1 MiB - 4 KiB, data, a hole to the end of file, whose
     last block straddles it.  */
  fd = create ("k-eio", path);
  size = MiB + 8 * KiB + 512;
  put (fd, 0, 4 * KiB, DATA);
  put (fd, MiB, 4 * KiB, DATA);
  ftruncate (fd, size);
  fsync (fd);
  drop_caches ();

  e = falloc (fd, 0, 0, 2 * MiB);
  if (!patched)
    {
      ok (e == EOPNOTSUPP, "eio: mode 0 refused: EOPNOTSUPP (got %s)",
	  strerror (e));
      close (fd);
      close (devfd);
      return;
    }
  ok (e != 0, "eio: mode 0 over holes inside a file and past its end, "
      "writes failing: an error (got %s)", e ? strerror (e) : "0");
  ok (fsize (fd) == size, "eio: the size as before (%lld, was %lld)",
      (long long) fsize (fd), (long long) size);
  ok (same (fd, 0, 4 * KiB, DATA) && same (fd, 4 * KiB, MiB - 4 * KiB, 0)
      && same (fd, MiB, 4 * KiB, DATA)
      && same (fd, MiB + 4 * KiB, size - MiB - 4 * KiB, 0),
      "eio: the file reads as before: data and zeros");
  /* The device read through its page cache now: a direct read writes its
     range back first, which fails, and then the metadata read back from
     the disk (never written) is no longer what the file maps.  Nothing
     read the data blocks through it, and reading writes nothing.  */
  close (devfd);
  devfd = open (dev, O_RDONLY);
  e = devfd < 0 ? -1
      : stale_mapped (fd, devfd, size, bs, DELETED, &mapped, &stale);
  ok (e == 0 && stale == 0, "eio: no block mapped inside the file holds "
      "the deleted data, read from the device (%lld blocks mapped, %lld "
      "hold it%s%s)", (long long) mapped, (long long) stale,
      e ? "; FIEMAP or a read failed: " : "", e ? strerror (errno) : "");
  /* The disk fails writes from now on: the file stays.  */
  close (fd);
  if (devfd >= 0)
    close (devfd);
}

/* Sectors the device DEV has written (field 7 of /sys/block/NAME/stat),
   after a sync; -1 if unknown.  */
static int64_t
written (const char *dev)
{
  char p[256];
  long long f[7];
  const char *name = strrchr (dev, '/');
  FILE *s;
  int n;

  sync ();
  snprintf (p, sizeof p, "/sys/block/%s/stat", name ? name + 1 : dev);
  if (!(s = fopen (p, "r")))
    return -1;
  n = fscanf (s, "%lld %lld %lld %lld %lld %lld %lld", &f[0], &f[1], &f[2],
	      &f[3], &f[4], &f[5], &f[6]);
  fclose (s);
  return n == 7 ? f[6] : -1;
}

static void
oversize (void)
{
  char dev[512], path[4096];
  int fd = create ("k-oversize", path), e;
  int want = patched ? ENOSPC : EOPNOTSUPP;
  int64_t free0, b0, s0, len, w0, w1, f;

  if (!device_of (dev, sizeof dev))
    {
      ok (0, "oversize: the device of %s", dir);
      return;
    }
  put (fd, 0, 4 * KiB, DATA);
  drop_caches ();
  free0 = ffree (fd);
  b0 = fblocks (fd);
  s0 = fsize (fd);
  len = (free0 + 8 * MiB) & ~(MiB - 1);
  w0 = written (dev);
  e = falloc (fd, 0, 0, len);
  w1 = written (dev);
  f = ffree (fd);
  ok (e == want, "oversize: %lld MiB with %lld KiB free: %s (got %s)",
      (long long) (len / MiB), (long long) (free0 / KiB), strerror (want),
      strerror (e));
  ok (fsize (fd) == s0 && fblocks (fd) == b0 && f == free0
      && same (fd, 0, 4 * KiB, DATA), "oversize: size, allocation, free "
      "space and bytes as before (size %lld/%lld, allocated %lld/%lld, "
      "free %lld/%lld)", (long long) fsize (fd), (long long) s0,
      (long long) fblocks (fd), (long long) b0, (long long) f,
      (long long) free0);
  if (patched)
    ok (w0 >= 0 && w1 >= 0 && (w1 - w0) * 512 < free0 / 16,
	"oversize: refused without writing the free space: %lld KiB "
	"written to %s (less than 1/16 of the %lld KiB free)",
	(long long) ((w1 - w0) / 2), dev, (long long) (free0 / KiB));
  close (fd);
  unlink (path);
}

int
main (int argc, char **argv)
{
  if (argc != 4)
    {
      fprintf (stderr, "usage: kfail stock|patched eio|oversize DIR\n");
      return 2;
    }
  patched = strcmp (argv[1], "patched") == 0;
  dir = argv[3];
  if (strcmp (argv[2], "eio") == 0)
    eio ();
  else if (strcmp (argv[2], "oversize") == 0)
    oversize ();
  else
    {
      fprintf (stderr, "kfail: no check %s\n", argv[2]);
      return 2;
    }
  return failed;
}
