/* kcheck KIND FS DIR: what the kernel series changes, asserted on the
   filesystem FS (ext2, exfat, jfs, ext4, xfs) mounted at DIR in the VM of make
   check-kernel, whose kernel is KIND (stock or patched).  The expected
   answer of every call comes from KIND and FS, never from the kernel
   itself.  Raw system calls only: no library decides anything here.

   ext2, exfat and jfs have no ->fallocate in 6.1: stock refuses every
   mode with EOPNOTSUPP.  Patch 1 gives ext2 mode 0 only: it allocates the
   holes of the range without changing a byte (bytes stored past the end
   of file through a mapping included), and when it fails part way
   (ENOSPC, EDQUOT, a fatal signal) nothing stays allocated past the end
   of file, on an append-only file too.  exfat and jfs answer as stock.
   Every other mode, KEEP_SIZE included (these filesystems cannot keep
   blocks past the end of file), is EOPNOTSUPP on both kernels.
   FALLOC_FL_WRITE_ZEROES (patch 2, a backport of Linux 6.17's): on the
   patched ext4 the range reads zeros and is left written (FIEMAP: mapped,
   no unwritten extent), over holes, unwritten extents and data alike, the
   disk blocks under it zeroed; the size grows to the end of the range.
   Combined with KEEP_SIZE or any other mode it is EOPNOTSUPP, as on every
   other filesystem and on the stock kernel.  FALLOC_FL_NO_HIDE_STALE is a
   reserved value (an unmerged 2012 proposal): EOPNOTSUPP everywhere.
   FS ext2-nowz and ext4-nowz: ext2 and ext4 on a disk without write
   zeroes, where only nowz() runs.

   Prints "PASS: ...", "FAIL: ...", "UNSUPPORTED: ..." and "# ..." lines;
   exits 1 if anything failed.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/quota.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#ifndef FALLOC_FL_NO_HIDE_STALE
# define FALLOC_FL_NO_HIDE_STALE 0x04
#endif
#ifndef FALLOC_FL_WRITE_ZEROES
# define FALLOC_FL_WRITE_ZEROES 0x80
#endif
#ifndef FS_EXTENT_FL
# define FS_EXTENT_FL 0x00080000
#endif
#define KiB 1024LL
#define MiB (1024 * KiB)

static const char *kind, *fs, *dir;
/* PATCHED: the kernel is; NOFALLOC: FS has no ->fallocate in 6.1;
   KALLOC: patch 1 gives it mode 0 (ext2, patched).  */
static int patched, nofalloc, kalloc;

#include "kok.h"
#include "kfile.h"

static int
falloc (int fd, int mode, int64_t off, int64_t len)
{
  errno = 0;
  return syscall (SYS_fallocate, fd, mode, (long) off, (long) len) ? errno : 0;
}

static const char *
ename (int e)
{
  static char buf[32];

  switch (e)
    {
    case 0: return "0";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case ENOSPC: return "ENOSPC";
    case EPERM: return "EPERM";
    case EINVAL: return "EINVAL";
    case EDQUOT: return "EDQUOT";
    default: snprintf (buf, sizeof buf, "errno %d", e); return buf;
    }
}

/* What mode 0 must answer here: 0 where it allocates.  */
static int
want_alloc (void)
{
  return nofalloc && !kalloc ? EOPNOTSUPP : 0;
}

/* Modes 0 and KEEP_SIZE on a filesystem without ->fallocate.  */
static void
alloc_modes (void)
{
  char path[4096];
  int fd = create ("k-alloc", path), e, want = want_alloc ();
  int64_t b0;

  /* Mode 0 past the end of file: size offset + len, len allocated, the
     data before untouched.  */
  put (fd, 0, 4096, 1);
  b0 = fblocks (fd);
  e = falloc (fd, 0, 64 * KiB, 256 * KiB);
  ok (e == want, "mode 0 past the end of file: %s (got %s)", ename (want), ename (e));
  if (!want && !e)
    {
      ok (fsize (fd) == 320 * KiB, "mode 0: size is offset + len "
	  "(%lld)", (long long) fsize (fd));
      ok (fblocks (fd) - b0 >= 256 * KiB, "mode 0: len allocated "
	  "(%lld bytes more)", (long long) (fblocks (fd) - b0));
      ok (same (fd, 0, 4096, 1) && same (fd, 4096, 316 * KiB, 0),
	  "mode 0: data kept, the rest reads zeros");
    }
  else
    ok (fsize (fd) == 4096 && fblocks (fd) == b0,
	"mode 0 refused: file unchanged");

  /* Mode 0 ending inside the last block, which is allocated: only the
     size changes.  */
  ftruncate (fd, 0);
  put (fd, 0, 5000, 10);
  fsync (fd);
  b0 = fblocks (fd);
  e = falloc (fd, 0, 0, 5100);
  ok (e == want, "mode 0 ending inside the last block: %s (got %s)",
      ename (want), ename (e));
  ok (fsize (fd) == (want ? 5000 : 5100) && same (fd, 0, 5000, 10)
      && same (fd, 5000, fsize (fd) - 5000, 0),
      "mode 0 ending inside the last block: size %lld, data kept",
      (long long) fsize (fd));

  /* Mode 0 inside the file: a sparse 1 MiB with data at both ends; its
     holes are allocated, nothing else changes.  */
  ftruncate (fd, 0);
  put (fd, 0, 4096, 2);
  put (fd, MiB, 4096, 3);
  fsync (fd);
  b0 = fblocks (fd);
  e = falloc (fd, 0, 0, MiB + 4096);
  ok (e == want, "mode 0 over the holes of a sparse file: %s (got %s)",
      ename (want), ename (e));
  ok (fsize (fd) == MiB + 4096 && same (fd, 0, 4096, 2)
      && same (fd, 4096, MiB - 4096, 0) && same (fd, MiB, 4096, 3),
      "mode 0 inside the file: size and every byte unchanged");
  if (!want && !e)
    ok (fblocks (fd) >= MiB + 4096, "mode 0 inside the file: every block "
	"allocated (%lld bytes, %lld before)", (long long) fblocks (fd),
	(long long) b0);

  /* KEEP_SIZE: these filesystems cannot keep blocks past the end of file,
     so the patched kernel refuses the mode, inside the file too.  */
  for (int past = 0; past < 2; past++)
    {
      b0 = fblocks (fd);
      e = falloc (fd, FALLOC_FL_KEEP_SIZE, past ? MiB : 0, 256 * KiB);
      ok (e == EOPNOTSUPP, "KEEP_SIZE %s the end of file: EOPNOTSUPP "
	  "(got %s)", past ? "past" : "before", ename (e));
      ok (fsize (fd) == MiB + 4096 && fblocks (fd) == b0,
	  "KEEP_SIZE %s the end refused: file unchanged",
	  past ? "past" : "before");
    }
  close (fd);
  unlink (path);
}

/* Every mode but 0 and KEEP_SIZE stays EOPNOTSUPP where there is no
   ->fallocate, on both kernels.  WRITE_ZEROES is refused everywhere but
   on the patched ext4, and there too with KEEP_SIZE or another mode;
   NO_HIDE_STALE, reserved, everywhere (vfs_fallocate refuses it
   before any filesystem or block device sees it).  */
static void
other_modes (void)
{
  static const struct { int mode; const char *name; } m[] = {
    { FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, "PUNCH_HOLE" },
    { FALLOC_FL_ZERO_RANGE, "ZERO_RANGE" },
    { FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, "ZERO_RANGE|KEEP_SIZE" },
    { FALLOC_FL_COLLAPSE_RANGE, "COLLAPSE_RANGE" },
    { FALLOC_FL_INSERT_RANGE, "INSERT_RANGE" },
    { FALLOC_FL_UNSHARE_RANGE, "UNSHARE_RANGE" },
    { FALLOC_FL_WRITE_ZEROES, "WRITE_ZEROES" },
    { FALLOC_FL_WRITE_ZEROES | FALLOC_FL_KEEP_SIZE, "WRITE_ZEROES|KEEP_SIZE" },
    { FALLOC_FL_WRITE_ZEROES | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
      "WRITE_ZEROES|PUNCH_HOLE" },
    { FALLOC_FL_WRITE_ZEROES | FALLOC_FL_ZERO_RANGE, "WRITE_ZEROES|ZERO_RANGE" },
    { FALLOC_FL_WRITE_ZEROES | FALLOC_FL_COLLAPSE_RANGE,
      "WRITE_ZEROES|COLLAPSE_RANGE" },
    { FALLOC_FL_WRITE_ZEROES | FALLOC_FL_UNSHARE_RANGE,
      "WRITE_ZEROES|UNSHARE_RANGE" },
    { FALLOC_FL_NO_HIDE_STALE, "NO_HIDE_STALE" },
    { FALLOC_FL_NO_HIDE_STALE | FALLOC_FL_KEEP_SIZE, "NO_HIDE_STALE|KEEP_SIZE" },
    { FALLOC_FL_NO_HIDE_STALE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
      "NO_HIDE_STALE|PUNCH_HOLE" },
    { FALLOC_FL_NO_HIDE_STALE | FALLOC_FL_ZERO_RANGE, "NO_HIDE_STALE|ZERO_RANGE" },
  };
  char path[4096];
  int fd = create ("k-modes", path);
  int ext4 = strcmp (fs, "ext4") == 0;

  put (fd, 0, 256 * KiB, 4);
  fsync (fd);
  for (size_t i = 0; i < sizeof m / sizeof *m; i++)
    {
      int e, ours = m[i].mode & (FALLOC_FL_WRITE_ZEROES
				 | FALLOC_FL_NO_HIDE_STALE);
      int64_t b0 = fblocks (fd);

      if (!nofalloc && !ours)
	continue;		/* the filesystem's own business */
      if (ext4 && m[i].mode == FALLOC_FL_WRITE_ZEROES)
	continue;		/* write_zeroes (), below */
      e = falloc (fd, m[i].mode, 64 * KiB, 64 * KiB);
      ok (e == EOPNOTSUPP, "%s: EOPNOTSUPP (got %s)", m[i].name, ename (e));
      ok (fsize (fd) == 256 * KiB && fblocks (fd) == b0
	  && same (fd, 0, 256 * KiB, 4), "%s refused: file unchanged",
	  m[i].name);
    }
  close (fd);
  unlink (path);
}

/* A page dirtied through a shared mapping over a hole keeps its bytes
   when mode 0 allocates the hole under it (the real ext2 driver gives
   such a page its block only at writeback).  */
static void
mapped (void)
{
  char path[4096];
  int fd = create ("k-mapped", path), e, want = want_alloc ();
  char *p;

  ftruncate (fd, 256 * KiB);
  p = mmap (NULL, 256 * KiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    {
      printf ("FAIL: mmap: %s\n", strerror (errno));
      failed = 1;
      close (fd);
      return;
    }
  memset (p + 128 * KiB + 100, 'M', 5000);
  e = falloc (fd, 0, 0, 256 * KiB);
  ok (e == want, "mode 0 under a dirty shared mapping: %s (got %s)",
      ename (want), ename (e));
  char b[5000];
  memset (b, 'M', sizeof b);
  msync (p, 256 * KiB, MS_SYNC);
  munmap (p, 256 * KiB);
  drop_caches ();
  char r[5002];
  ok (pread (fd, r, sizeof r, 128 * KiB + 99) == sizeof r && r[0] == 0
      && memcmp (r + 1, b, sizeof b) == 0 && r[5001] == 0,
      "bytes stored through the mapping kept, on disk");
  if (!want && !e)
    ok (fblocks (fd) >= 256 * KiB, "mapped file allocated (%lld)",
	(long long) fblocks (fd));
  close (fd);
  unlink (path);
}

static int device_of (char *dev, size_t n);
static int extents (int fd, int64_t off, int64_t len,
		    struct fiemap_extent *e, int n);

/* Which blocks of BS bytes of the device DEVFD hold the pattern TAG, read
   past the page cache: a bit each in a new map of N blocks, or NULL.  */
static unsigned char *
tag_map (int devfd, int64_t bs, int64_t n, unsigned tag)
{
  static unsigned char b[1 << 20] __attribute__ ((aligned (4096)));
  unsigned char *map = calloc (n / 8 + 1, 1);

  for (int64_t at = 0; map && at < n * bs; at += sizeof b)
    {
      ssize_t k = pread (devfd, b, sizeof b, at);
      if (k <= 0)
	break;
      for (int64_t j = 0; j + bs <= k; j += bs)
	{
	  uint64_t v;
	  memcpy (&v, b + j, 8);
	  if ((v >> 40) == tag)
	    map[(at + j) / bs / 8] |= 1 << ((at + j) / bs % 8);
	}
    }
  return map;
}

/* Of the blocks of BS bytes mapped in FD, how many MAP marks, in *WAS, and
   how many in all, in *ALL.  0, or -1.  */
static int
held (int fd, unsigned char *map, int64_t n, int64_t bs, int64_t *was,
      int64_t *all)
{
  static struct fiemap_extent e[4096];
  int k = extents (fd, 0, fsize (fd), e, 4096);

  *was = *all = 0;
  for (int i = 0; i < k; i++)
    for (int64_t b = e[i].fe_physical / bs;
	 b < (int64_t) ((e[i].fe_physical + e[i].fe_length) / bs) && b < n; b++)
      {
	*was += (map[b / 8] >> (b % 8)) & 1;
	++*all;
      }
  return k < 0 ? -1 : 0;
}

/* New blocks read zeros, never what they held: a pattern written over
   most of the free space and deleted, then mode 0 on a new file (no page
   of the range cached: patch 1 zeroes in batches) and on a file with a
   cached page in the range (each run zeroed before it is mapped); both
   read zeros, from the page cache and then from the disk.  Where mode 0
   allocates, most of the new blocks must have held the pattern before
   the call (read from the device then), or reading zeros proves
   nothing.  */
static void
fresh (void)
{
  char path[4096], ppath[4096], dev[512];
  int fd, e, devfd = -1;
  int64_t len, bs, n, was, all;
  struct statvfs v;
  unsigned char *map = NULL;

  fd = create ("k-pattern", ppath);
  statvfs (dir, &v);
  len = ((int64_t) v.f_bavail * v.f_frsize * 3 / 4) & ~(MiB - 1);
  put (fd, 0, len, 13);
  fsync (fd);
  close (fd);
  unlink (ppath);
  drop_caches ();
  bs = v.f_frsize;
  n = v.f_blocks;
  if (!want_alloc ())
    {
      if (device_of (dev, sizeof dev))
	devfd = open (dev, O_RDONLY | O_DIRECT);
      ok (devfd >= 0, "fresh: the device of %s opens (%s)", dir,
	  devfd >= 0 ? "0" : strerror (errno));
    }
  /* A quarter of the free space each, the first file kept until the
     second is made: both over blocks that held the pattern.  */
  len /= 3;
  char kept[4096] = "";
  for (int cached = 0; cached < 2; cached++)
    {
      /* Again each time: the first call's blocks are zeros now.  */
      free (map);
      map = devfd >= 0 ? tag_map (devfd, bs, n, 13) : NULL;
      fd = create (cached ? "k-fresh-cached" : "k-fresh", path);
      if (cached)
	put (fd, 0, 4096, 14);
      e = falloc (fd, 0, 0, len);
      ok (e == want_alloc (), "mode 0 of %lld MiB over deleted data%s: %s "
	  "(got %s)", (long long) (len / MiB),
	  cached ? ", a page cached" : "", ename (want_alloc ()), ename (e));
      if (map && !e && held (fd, map, n, bs, &was, &all) == 0)
	ok (all > 0 && was * 2 >= all, "mode 0 over deleted data%s: its blocks "
	    "held the deleted data before the call (%lld of %lld)",
	    cached ? ", a page cached" : "", (long long) was, (long long) all);
      else if (map && !e)
	ok (0, "mode 0 over deleted data: FIEMAP (%s)", strerror (errno));
      int z = same (fd, cached ? 4096 : 0, fsize (fd) - (cached ? 4096 : 0), 0);
      drop_caches ();
      z = z && same (fd, cached ? 4096 : 0, fsize (fd) - (cached ? 4096 : 0), 0)
	  && (!cached || same (fd, 0, 4096, 14));
      ok (z, "mode 0 over deleted data%s: reads zeros, cached and from the "
	  "disk (size %lld)", cached ? ", a page cached" : "",
	  (long long) fsize (fd));
      close (fd);
      if (kept[0])
	unlink (kept);
      snprintf (kept, sizeof kept, "%s", path);
      drop_caches ();
    }
  unlink (kept);
  free (map);
  if (devfd >= 0)
    close (devfd);
}

/* Bytes stored through a shared mapping past the end of file, in the page
   that straddles it, are not file data: mode 0 extending the file over
   them must leave zeros there, in the page cache and on disk, as a write
   extending the file would.  */
static void
eof_tail (void)
{
  char path[4096];
  int fd = create ("k-tail", path), e;
  char *p;

  put (fd, 0, 5000, 12);
  fsync (fd);
  p = mmap (NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    {
      ok (0, "eof tail: mmap: %s", strerror (errno));
      close (fd);
      return;
    }
  p[5000] = p[6000] = p[8191] = 'T';
  e = falloc (fd, 0, 0, 8192);
  ok (e == want_alloc (), "mode 0 over bytes stored past the end of file: "
      "%s (got %s)", ename (want_alloc ()), ename (e));
  if (!e)
    ok (fsize (fd) == 8192 && same (fd, 0, 5000, 12)
	&& same (fd, 5000, 3192, 0), "bytes stored past the old end of file "
	"through a mapping read as zeros (offset 6000: %d)", p[6000]);
  msync (p, 8192, MS_SYNC);
  munmap (p, 8192);
  drop_caches ();
  ok (same (fd, 0, 5000, 12) && same (fd, 5000, fsize (fd) - 5000, 0),
      "bytes stored past the old end of file: zeros on disk too");
  close (fd);
  unlink (path);
}

/* ENOSPC with the filesystem filled to about 1 MiB free.  Past the end of
   file, all or nothing: a request that needs more fails with ENOSPC and
   leaves size, allocation, free space and bytes as they were (patch 1
   counts the blocks first and refuses what cannot fit; what the count
   cannot foresee it allocates until the filesystem refuses, then frees
   it all).  Holes inside the file that were filled before a failure stay
   allocated, reading zeros: there, size and bytes as they were.  */
static void
enospc (void)
{
  char path[4096], fpath[4096];
  static unsigned char z[1 << 20];
  int fd = create ("k-enospc", path), fill = create ("k-filler", fpath), e;
  int want = kalloc ? ENOSPC : EOPNOTSUPP;
  int64_t free0, b0, s0, keep = MiB, f;

  /* Data, a 2 MiB hole, data.  exfat has no sparse files: there the hole
     is allocated zeros.  */
  put (fd, 0, 4096, 5);
  put (fd, 2 * MiB + 4096, 4096, 6);
  fsync (fd);
  while (write (fill, z, sizeof z) > 0)
    ;
  fsync (fill);
  /* Give back KEEP bytes.  */
  ftruncate (fill, fsize (fill) > keep ? fsize (fill) - keep : 0);
  free0 = ffree (fd);
  b0 = fblocks (fd);
  s0 = fsize (fd);
  printf ("# %lld bytes free\n", (long long) free0);

  e = falloc (fd, 0, s0, 8 * MiB);
  ok (e == want, "8 MiB past the end of file with %lld KiB free: %s "
      "(got %s)", (long long) free0 / 1024, ename (want), ename (e));
  f = ffree (fd);
  ok (fsize (fd) == s0 && fblocks (fd) == b0 && f == free0
      && same (fd, 0, 4096, 5) && same (fd, 4096, 2 * MiB, 0)
      && same (fd, 2 * MiB + 4096, 4096, 6),
      "after 8 MiB past the end: size, allocation, free space and bytes "
      "as before (size %lld/%lld, allocated %lld/%lld, free %lld/%lld)",
      (long long) fsize (fd), (long long) s0, (long long) fblocks (fd),
      (long long) b0, (long long) f, (long long) free0);

  /* What fits is allocated: not every request is ENOSPC.  */
  e = falloc (fd, 0, s0, 256 * KiB);
  ok (e == want_alloc () && fsize (fd) == (e ? s0 : s0 + 256 * KiB),
      "256 KiB past the end with %lld KiB free: %s (got %s, size %lld)",
      (long long) free0 / 1024, ename (want_alloc ()), ename (e),
      (long long) fsize (fd));
  ftruncate (fd, s0);

  struct { const char *what; int64_t off, len; } r[] = {
    { "the hole inside (2 MiB)", 4096, 2 * MiB },
    { "the hole and past the end (4 MiB)", 0, 4 * MiB },
  };
  for (size_t i = 0; i < sizeof r / sizeof *r; i++)
    {
      e = falloc (fd, 0, r[i].off, r[i].len);
      ok (e == want, "%s with %lld KiB free: %s (got %s)", r[i].what,
	  (long long) free0 / 1024, ename (want), ename (e));
      ok (fsize (fd) == s0 && (kalloc || fblocks (fd) == b0)
	  && same (fd, 0, 4096, 5) && same (fd, 4096, 2 * MiB, 0)
	  && same (fd, 2 * MiB + 4096, 4096, 6),
	  "after %s: size%s and bytes as before (size %lld/%lld, "
	  "allocated %lld/%lld)", r[i].what, kalloc ? "" : ", allocation",
	  (long long) fsize (fd), (long long) s0, (long long) fblocks (fd),
	  (long long) b0);
    }
  close (fill);
  unlink (fpath);
  close (fd);
  unlink (path);
}

/* Whether PID sleeps in fallocate(2) now, by /proc/PID/syscall.  */
static int
in_fallocate (pid_t pid)
{
  char p[64], b[64];
  ssize_t n;
  int fd;

  snprintf (p, sizeof p, "/proc/%d/syscall", (int) pid);
  fd = open (p, O_RDONLY);
  if (fd < 0)
    return 0;
  n = read (fd, b, sizeof b - 1);
  close (fd);
  if (n <= 0)
    return 0;
  b[n] = 0;
  return b[0] >= '0' && b[0] <= '9' && atol (b) == SYS_fallocate;
}

/* All or nothing past the end of file when a fatal signal ends a large
   mode 0: a SIGKILL sent while /proc says the child is in the call, so
   that it lands there (tried again if the call ended first).  After each
   try the call completed or the file is as it was (size, allocation,
   free space), and the kill must have undone one at least.  Stock
   refuses at once.  */
static void
killed (void)
{
  char path[4096];
  int fd = create ("k-killed", path), st, landed = 0, undone = 0, bad = 0;
  int tries;
  int64_t b0, f0, len, s1 = 0, b1 = 0, f1 = 0;
  struct statvfs v;

  put (fd, 0, 4096, 11);
  fsync (fd);
  b0 = fblocks (fd);
  f0 = ffree (fd);
  statvfs (dir, &v);
  len = ((int64_t) v.f_bavail * v.f_frsize * 3 / 4) & ~(MiB - 1);
  for (tries = 0; !undone && !bad && tries < 20; tries++)
    {
      pid_t pid = fork ();
      int sent = 0;
      if (pid == 0)
	_exit (falloc (fd, 0, 4096, len));
      for (int i = 0; i < 100000 && !sent; i++)
	if (in_fallocate (pid))
	  sent = kill (pid, SIGKILL) == 0;
      waitpid (pid, &st, 0);
      landed += sent;
      s1 = fsize (fd);
      b1 = fblocks (fd);
      f1 = ffree (fd);
      undone = sent && s1 == 4096 && b1 == b0 && f1 == f0;
      bad = !undone && !(s1 == 4096 + len && b1 >= b0 + len)
	    && !(!kalloc && s1 == 4096 && b1 == b0);
      if (!undone && !bad && s1 != 4096)
	{
	  ftruncate (fd, 4096);
	  fsync (fd);
	}
    }
  if (!kalloc)
    ok (!landed && !bad && WIFEXITED (st) && WEXITSTATUS (st) == EOPNOTSUPP,
	"mode 0 of %lld MiB: EOPNOTSUPP at once, file unchanged",
	(long long) (len / MiB));
  else
    ok (landed && undone && !bad, "SIGKILL in a %lld MiB mode 0 (%d tries, "
	"%d landed in the call): size %lld, %lld bytes allocated, %lld free "
	"(before: 4096, %lld, %lld; each try as before or complete)",
	(long long) (len / MiB), tries, landed, (long long) s1,
	(long long) b1, (long long) f1, (long long) b0, (long long) f0);
  ok (same (fd, 0, 4096, 11), "killed in mode 0: data kept");
  close (fd);
  unlink (path);
}

/* A writer of the same file during a large mode 0 over its holes: a
   child stores a new tag, round after round, in 64 slots of the range,
   through pwrite (4 KiB at an odd offset) and through a shared mapping,
   and records each tag it stored; it stops after the call returns.
   Every slot then reads back the last tag stored in it, on disk.  */
static void
writer (void)
{
  enum { SLOTS = 64 };
  char path[4096];
  int fd = create ("k-writer", path), st, e, bad = 0;
  int64_t size = 8 * MiB, gap = size / SLOTS;
  volatile unsigned *sh = mmap (NULL, 4096, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  unsigned char *p;

  ftruncate (fd, size);
  p = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED || sh == MAP_FAILED)
    {
      ok (0, "writer: mmap: %s", strerror (errno));
      close (fd);
      return;
    }
  /* sh[0]: the call is over; sh[1]: rounds; sh[2 + K]: slot K's tag.  */
  pid_t pid = fork ();
  if (pid == 0)
    {
      for (unsigned t = 1; !sh[0] || t < 3; t++)
	{
	  for (int k = 0; k < SLOTS; k++)
	    {
	      if (k & 1)
		pattern (p + k * gap + 8192, 4096, k * gap + 8192, t);
	      else
		put (fd, k * gap + 100, 4096, t);
	      sh[2 + k] = t;
	    }
	  sh[1] = t;
	}
      _exit (0);
    }
  while (!sh[1])
    usleep (100);
  e = falloc (fd, 0, 0, size + MiB);
  sh[0] = 1;
  waitpid (pid, &st, 0);
  msync (p, size, MS_SYNC);
  munmap (p, size);
  drop_caches ();
  for (int k = 0; k < SLOTS; k++)
    {
      int64_t off = k * gap + (k & 1 ? 8192 : 100);
      bad += !same (fd, off, 4096, sh[2 + k]);
    }
  ok (e == want_alloc (), "mode 0 of 9 MiB under a writer of the same "
      "file: %s (got %s)", ename (want_alloc ()), ename (e));
  ok (!bad && WIFEXITED (st) && WEXITSTATUS (st) == 0,
      "a writer of the same file during the call: every slot reads its "
      "last tag (%u rounds, %d slots wrong)", sh[1], bad);
  close (fd);
  unlink (path);
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

/* A user quota of 1 MiB for UID on ext2 (a v2 quota file made here: an
   empty tree, as quotacheck leaves it for a filesystem without files of
   that user).  Over the limit, patch 1 must fail with EDQUOT and leave
   nothing allocated, and the user's usage where it was; under it, it
   allocates.  The caller must not have CAP_SYS_RESOURCE, which ignores
   hard limits: a child of another uid makes the calls.  Stock refuses
   both with EOPNOTSUPP.  */
static void
quota (void)
{
  enum { UID = 4242 };
  char dev[512], qpath[4096], path[4096];
  unsigned char head[2048] = { 0 };
  /* Header (magic, version 1: vfsv1), then the info: grace times,
     flags, blocks in the file (header and tree root), free lists.  */
  uint32_t info[8] = { 0xd9c01f11, 1, 0, 0, 0, 2, 0, 0 };
  struct if_dqblk q;
  int fd, e, st;

  if (!device_of (dev, sizeof dev))
    {
      ok (0, "quota: the device of %s", dir);
      return;
    }
  fd = create ("aquota.user", qpath);
  memcpy (head, info, sizeof info);
  ok (write (fd, head, sizeof head) == sizeof head && fsync (fd) == 0
      && close (fd) == 0, "quota: %s written", qpath);
  e = syscall (SYS_quotactl, QCMD (Q_QUOTAON, USRQUOTA), dev, QFMT_VFS_V1,
	       qpath) ? errno : 0;
  ok (e == 0, "quota: on for %s (%s)", dev, e ? strerror (e) : "0");
  if (e)
    return;
  memset (&q, 0, sizeof q);
  q.dqb_bhardlimit = q.dqb_bsoftlimit = 1024;	/* 1 KiB units */
  q.dqb_valid = QIF_BLIMITS;
  e = syscall (SYS_quotactl, QCMD (Q_SETQUOTA, USRQUOTA), dev, UID, &q)
      ? errno : 0;
  ok (e == 0, "quota: 1 MiB for uid %d (%s)", UID, e ? strerror (e) : "0");

  fd = create ("k-quota", path);
  fchown (fd, UID, UID);
  /* An append-only file: setting the size back would be refused.  */
  char apath[4096];
  int fa = create ("k-quota-append", apath), flags = 0;
  fchown (fa, UID, UID);
  e = ioctl (fa, FS_IOC_GETFLAGS, &flags);
  flags |= FS_APPEND_FL;
  ok (e == 0 && ioctl (fa, FS_IOC_SETFLAGS, &flags) == 0,
      "quota: chattr +a %s (%s)", apath, strerror (errno));
  pid_t pid = fork ();
  if (pid == 0)
    {
      if (setgid (UID) || setuid (UID))
	{
	  printf ("FAIL: quota: setuid %d: %s\n", UID, strerror (errno));
	  _exit (1);
	}
      int want = patched ? EDQUOT : EOPNOTSUPP;
      e = falloc (fa, 0, 0, 4 * MiB);
      ok (e == want && fsize (fa) == 0 && fblocks (fa) == 0,
	  "quota: 4 MiB over a 1 MiB limit, append-only file: %s, nothing "
	  "allocated (got %s, size %lld, %lld bytes allocated)", ename (want),
	  ename (e), (long long) fsize (fa), (long long) fblocks (fa));
      e = falloc (fd, 0, 0, 4 * MiB);
      ok (e == want && fsize (fd) == 0 && fblocks (fd) == 0,
	  "quota: 4 MiB over a 1 MiB limit: %s, nothing allocated (got %s, "
	  "size %lld, %lld bytes allocated)", ename (want), ename (e),
	  (long long) fsize (fd), (long long) fblocks (fd));
      e = falloc (fd, 0, 0, 512 * KiB);
      want = patched ? 0 : EOPNOTSUPP;
      ok (e == want && fsize (fd) == (patched ? 512 * KiB : 0),
	  "quota: 512 KiB under the limit: %s (got %s, size %lld)",
	  ename (want), ename (e), (long long) fsize (fd));
      _exit (failed);
    }
  waitpid (pid, &st, 0);
  failed |= !WIFEXITED (st) || WEXITSTATUS (st);
  /* The usage counts what is allocated now, nothing of the failed call
     (indirect blocks come on top of the 512 KiB: 1 KiB blocks).  */
  memset (&q, 0, sizeof q);
  e = syscall (SYS_quotactl, QCMD (Q_GETQUOTA, USRQUOTA), dev, UID, &q)
      ? errno : 0;
  ok (e == 0 && (int64_t) q.dqb_curspace == fblocks (fd) + fblocks (fa),
      "quota: the user's usage is what the files hold (%lld, files %lld)",
      (long long) q.dqb_curspace, (long long) (fblocks (fd) + fblocks (fa)));
  flags &= ~FS_APPEND_FL;
  ioctl (fa, FS_IOC_SETFLAGS, &flags);
  close (fa);
  unlink (apath);
  close (fd);
  unlink (path);
  e = syscall (SYS_quotactl, QCMD (Q_QUOTAOFF, USRQUOTA), dev, 0, NULL)
      ? errno : 0;
  ok (e == 0, "quota: off (%s)", e ? strerror (e) : "0");
  unlink (qpath);
}

/* Number of 4 KiB blocks of FD that hold the pattern TAG (at any offset:
   the stale blocks come back wherever the allocator put them).  */
static int64_t
stale_blocks (int fd, int64_t len, unsigned tag)
{
  static unsigned char b[1 << 20];
  int64_t n = 0;

  for (int64_t off = 0; off < len; off += sizeof b)
    {
      ssize_t k = pread (fd, b, sizeof b, off);
      if (k <= 0)
	break;
      for (ssize_t i = 0; i + 4096 <= k; i += 4096)
	{
	  uint64_t v;
	  memcpy (&v, b + i, 8);
	  n += (v >> 40) == tag;
	}
    }
  return n;
}

/* The extents of [OFF, OFF + LEN) of FD, written back first (FIEMAP),
   in E (at most N); their number, or -1.  */
static int
extents (int fd, int64_t off, int64_t len, struct fiemap_extent *e, int n)
{
  static struct { struct fiemap f; struct fiemap_extent e[256]; } m;
  int k = 0;

  for (int64_t at = off; at < off + len && k < n;)
    {
      memset (&m, 0, sizeof m);
      m.f.fm_start = at;
      m.f.fm_length = off + len - at;
      m.f.fm_flags = FIEMAP_FLAG_SYNC;
      m.f.fm_extent_count = 256;
      if (ioctl (fd, FS_IOC_FIEMAP, &m.f))
	return -1;
      if (m.f.fm_mapped_extents == 0)
	break;
      for (unsigned i = 0; i < m.f.fm_mapped_extents && k < n; i++)
	e[k++] = m.e[i];
      struct fiemap_extent *last = &m.e[m.f.fm_mapped_extents - 1];
      if (last->fe_flags & FIEMAP_EXTENT_LAST)
	break;
      at = last->fe_logical + last->fe_length;
    }
  return k;
}

/* What FIEMAP says of [OFF, OFF + LEN) of FD: the bytes of it that
   extents map, and how many of those extents are unwritten.  */
struct layout
{
  int64_t mapped;
  int unwritten;
};

static struct layout
layout (int fd, int64_t off, int64_t len)
{
  static struct fiemap_extent e[4096];
  struct layout l = { 0, 0 };
  int n = extents (fd, off, len, e, 4096);

  if (n < 0)
    l.unwritten = -1;
  for (int i = 0; i < n; i++)
    {
      int64_t lo = e[i].fe_logical, hi = lo + (int64_t) e[i].fe_length;
      lo = lo < off ? off : lo;
      hi = hi > off + len ? off + len : hi;
      if (hi > lo)
	{
	  l.mapped += hi - lo;
	  l.unwritten += (e[i].fe_flags & FIEMAP_EXTENT_UNWRITTEN) != 0;
	}
    }
  return l;
}

/* The disk blocks under [OFF, OFF + LEN) of FD (aligned to blocks of BS
   bytes), read from the device DEVFD past its page cache: how many hold
   the pattern TAG in *PAT, how many anything but zeros in *DIRTY, how
   many in all in *ALL.  0, or -1 if FIEMAP or a read failed.  */
static int
disk (int fd, int devfd, int64_t bs, int64_t off, int64_t len, unsigned tag,
      int64_t *pat, int64_t *dirty, int64_t *all)
{
  static struct fiemap_extent e[4096];
  static unsigned char b[1 << 20] __attribute__ ((aligned (4096)));
  int n = extents (fd, off, len, e, 4096);

  *pat = *dirty = *all = 0;
  if (n < 0)
    return -1;
  for (int i = 0; i < n; i++)
    {
      int64_t lo = e[i].fe_logical, hi = lo + (int64_t) e[i].fe_length;
      lo = lo < off ? off : lo;
      hi = hi > off + len ? off + len : hi;
      for (int64_t at = lo; at < hi;)
	{
	  int64_t k = hi - at < (int64_t) sizeof b ? hi - at : (int64_t) sizeof b;
	  int64_t phys = e[i].fe_physical + (at - e[i].fe_logical);
	  if (pread (devfd, b, k, phys) != k)
	    return -1;
	  for (int64_t j = 0; j + bs <= k; j += bs)
	    {
	      uint64_t v;
	      int nz = 0;
	      memcpy (&v, b + j, 8);
	      *pat += (v >> 40) == tag;
	      for (int64_t x = 0; x < bs && !nz; x++)
		nz = b[j + x] != 0;
	      *dirty += nz;
	      ++*all;
	    }
	  at += k;
	}
    }
  return 0;
}

/* WRITE_ZEROES on ext4, on blocks that held a pattern, written and
   deleted: over the unwritten extents of a mode-0 call, partly over them
   (the edges of the range inside blocks), over a new file past its end,
   over data (some of it only in the page cache), and on a file without
   extents.  On the patched kernel the range reads zeros, FIEMAP maps all
   of it and every block wholly inside it written, and the disk blocks
   under it hold zeros, read from the device; bytes outside it are kept.
   A block the range covers in part is zeroed in part through the page
   cache, as by ZERO_RANGE (upstream's ext4 does the same): one that held
   data is written, one that held none stays unwritten, as it reads zeros
   anyway.  On the stock kernel every call is EOPNOTSUPP and changes
   nothing.  */
static void
write_zeroes (void)
{
  char path[4096], path2[4096], path3[4096], ppath[4096], dev[512];
  int fd, fd2, fd3, devfd, e, want = patched ? 0 : EOPNOTSUPP;
  int64_t len, part, bs, pat, dirty, all, s0;
  struct statvfs v;
  struct layout l;

  if (!device_of (dev, sizeof dev)
      || (devfd = open (dev, O_RDONLY | O_DIRECT)) < 0)
    {
      ok (0, "WRITE_ZEROES: the device of %s opens (%s)", dir, strerror (errno));
      return;
    }
  {
    char q[600], w[64] = "?";
    snprintf (q, sizeof q, "/sys/block/%s/queue/write_zeroes_max_bytes",
	      strrchr (dev, '/') + 1);
    FILE *f = fopen (q, "r");
    if (f && fgets (w, sizeof w, f))
      w[strcspn (w, "\n")] = 0;
    if (f)
      fclose (f);
    printf ("# %s: write_zeroes_max_bytes %s\n", dev, w);
  }

  /* The pattern over nearly all the free space, then deleted.  */
  fd = create ("k-pattern", ppath);
  statvfs (dir, &v);
  bs = v.f_frsize;
  len = ((int64_t) v.f_bavail * v.f_frsize - 4 * MiB) & ~(MiB - 1);
  put (fd, 0, len, 7);
  fsync (fd);
  close (fd);
  unlink (ppath);
  drop_caches ();
  printf ("# pattern of %lld MiB written and deleted, %lld-byte blocks\n",
	  (long long) (len / MiB), (long long) bs);

  /* Over the unwritten extents of mode 0, which lie on pattern blocks.  */
  part = len / 4 & ~(MiB - 1);
  fd = create ("k-wz-unwritten", path);
  e = falloc (fd, 0, 0, part);
  l = layout (fd, 0, part);
  disk (fd, devfd, bs, 0, part, 7, &pat, &dirty, &all);
  ok (e == 0 && l.unwritten > 0 && l.mapped == part && pat > 0
      && same (fd, 0, part, 0), "mode 0 over the deleted pattern: %lld MiB "
      "of unwritten extents (%d) that read zeros, %lld of %lld blocks under "
      "them still hold the pattern (%s)", (long long) (part / MiB),
      l.unwritten, (long long) pat, (long long) all, ename (e));
  e = falloc (fd, FALLOC_FL_WRITE_ZEROES, 0, part);
  ok (e == want, "WRITE_ZEROES over unwritten extents: %s (got %s)",
      ename (want), ename (e));
  drop_caches ();
  l = layout (fd, 0, part);
  disk (fd, devfd, bs, 0, part, 7, &pat, &dirty, &all);
  if (patched)
    {
      ok (l.unwritten == 0 && l.mapped == part, "WRITE_ZEROES over unwritten "
	  "extents: written (FIEMAP: %d unwritten, %lld of %lld bytes mapped)",
	  l.unwritten, (long long) l.mapped, (long long) part);
      ok (same (fd, 0, part, 0) && stale_blocks (fd, part, 7) == 0
	  && dirty == 0 && all == part / bs && fsize (fd) == part,
	  "WRITE_ZEROES over unwritten extents: reads zeros, the disk "
	  "blocks hold zeros (%lld of %lld not, %lld with the pattern)",
	  (long long) dirty, (long long) all, (long long) pat);
    }
  else
    ok (l.unwritten > 0 && l.mapped == part && fsize (fd) == part
	&& same (fd, 0, part, 0), "WRITE_ZEROES refused: still unwritten "
	"(FIEMAP: %d), size and zeros kept", l.unwritten);

  /* Partly over unwritten extents: the range starts and ends inside
     blocks, which must read zeros too, and be written.  */
  fd2 = create ("k-wz-edges", path2);
  e = falloc (fd2, 0, 0, 256 * KiB);
  int64_t off = 5000, end = 200 * KiB + 3000;
  e = e ? e : falloc (fd2, FALLOC_FL_WRITE_ZEROES, off, end - off);
  ok (e == want, "WRITE_ZEROES over unwritten extents, from and to the "
      "middle of blocks: %s (got %s)", ename (want), ename (e));
  drop_caches ();
  int64_t in = (off + bs - 1) / bs * bs, out = end / bs * bs;
  l = layout (fd2, in, out - in);
  ok (same (fd2, 0, 256 * KiB, 0) && stale_blocks (fd2, 256 * KiB, 7) == 0
      && fsize (fd2) == 256 * KiB && (!patched || l.unwritten == 0),
      "WRITE_ZEROES from and to the middle of blocks: %s, size kept, the "
      "file reads zeros (FIEMAP over the blocks wholly inside: %d "
      "unwritten)", patched ? "written" : "refused", l.unwritten);

  /* A new file, past its end: the rest of the pattern's blocks.  */
  statvfs (dir, &v);
  part = ((int64_t) v.f_bavail * v.f_frsize - 2 * MiB) & ~(MiB - 1);
  fd3 = create ("k-wz-new", path3);
  e = falloc (fd3, FALLOC_FL_WRITE_ZEROES, 0, part);
  ok (e == want, "WRITE_ZEROES of %lld MiB on an empty file: %s (got %s)",
      (long long) (part / MiB), ename (want), ename (e));
  drop_caches ();
  if (patched)
    {
      l = layout (fd3, 0, part);
      disk (fd3, devfd, bs, 0, part, 7, &pat, &dirty, &all);
      ok (fsize (fd3) == part && fblocks (fd3) >= part && l.unwritten == 0
	  && l.mapped == part, "WRITE_ZEROES past the end of file: size "
	  "%lld, written (FIEMAP: %d unwritten, %lld bytes mapped)",
	  (long long) fsize (fd3), l.unwritten, (long long) l.mapped);
      ok (same (fd3, 0, part, 0) && stale_blocks (fd3, part, 7) == 0
	  && dirty == 0 && all == part / bs, "WRITE_ZEROES past the end of "
	  "file: reads zeros, the disk blocks hold zeros (%lld of %lld not, "
	  "%lld with the pattern)", (long long) dirty, (long long) all,
	  (long long) pat);
    }
  else
    ok (fsize (fd3) == 0 && fblocks (fd3) == 0, "WRITE_ZEROES refused: "
	"nothing allocated");
  close (fd3);
  unlink (path3);
  close (fd2);
  unlink (path2);
  close (fd);
  unlink (path);

  /* Over data, some of it only in the page cache: the bytes of the range
     become zeros, those outside it are kept; then across the end of
     file, which moves to the range's end.  */
  fd = create ("k-wz-data", path);
  put (fd, 0, 256 * KiB, 8);
  fsync (fd);
  put (fd, 100 * KiB, 8 * KiB, 9);
  e = falloc (fd, FALLOC_FL_WRITE_ZEROES, 10000, 150 * KiB);
  ok (e == want, "WRITE_ZEROES over data: %s (got %s)", ename (want),
      ename (e));
  drop_caches ();
  if (patched)
    ok (same (fd, 0, 10000, 8) && same (fd, 10000, 150 * KiB, 0)
	&& same (fd, 10000 + 150 * KiB, 256 * KiB - 10000 - 150 * KiB, 8)
	&& fsize (fd) == 256 * KiB, "WRITE_ZEROES over data: the range "
	"reads zeros, the bytes around it are kept, size kept");
  else
    ok (same (fd, 0, 100 * KiB, 8) && same (fd, 100 * KiB, 8 * KiB, 9)
	&& same (fd, 108 * KiB, 148 * KiB, 8) && fsize (fd) == 256 * KiB,
	"WRITE_ZEROES over data refused: every byte kept");
  s0 = fsize (fd);
  e = falloc (fd, FALLOC_FL_WRITE_ZEROES, 200 * KiB + 1000, 120 * KiB);
  ok (e == want, "WRITE_ZEROES across the end of file: %s (got %s)",
      ename (want), ename (e));
  drop_caches ();
  l = layout (fd, 0, 320 * KiB + 1000);
  struct layout li = layout (fd, 0, (320 * KiB + 1000) / bs * bs);
  if (patched)
    ok (fsize (fd) == 320 * KiB + 1000
	&& same (fd, 160 * KiB + 10000, 40 * KiB + 1000 - 10000, 8)
	&& same (fd, 200 * KiB + 1000, 120 * KiB, 0) && li.unwritten == 0
	&& l.mapped == 320 * KiB + 1000, "WRITE_ZEROES across the end of "
	"file: size %lld (the range's end), zeros, data before kept, "
	"allocated, written but for the partial last block (FIEMAP: %d "
	"unwritten before it, %lld bytes mapped)", (long long) fsize (fd),
	li.unwritten, (long long) l.mapped);
  else
    ok (fsize (fd) == s0, "WRITE_ZEROES across the end refused: size %lld "
	"kept", (long long) fsize (fd));
  close (fd);
  unlink (path);

  /* A file without extents (block-mapped, as after chattr -e): ext4
     cannot write zeroes there.  */
  fd = create ("k-wz-blockmap", path);
  int fl = 0;
  if (ioctl (fd, FS_IOC_GETFLAGS, &fl) == 0
      && (fl &= ~FS_EXTENT_FL, ioctl (fd, FS_IOC_SETFLAGS, &fl) == 0)
      && ioctl (fd, FS_IOC_GETFLAGS, &fl) == 0 && !(fl & FS_EXTENT_FL))
    {
      e = falloc (fd, FALLOC_FL_WRITE_ZEROES, 0, 64 * KiB);
      ok (e == EOPNOTSUPP && fsize (fd) == 0 && fblocks (fd) == 0,
	  "WRITE_ZEROES on a file without extents: EOPNOTSUPP, nothing "
	  "allocated (got %s)", ename (e));
    }
  else
    printf ("UNSUPPORTED: WRITE_ZEROES on a file without extents: the "
	    "extent flag stays (%s)\n", strerror (errno));
  close (fd);
  unlink (path);
  close (devfd);
}

/* FS on a disk without write zeroes (kernel/vm's ext2-nowz and
   ext4-nowz: qemu's write-zeroes=off).  ext2's mode 0 zeroes new blocks
   there by writing pages of zeros (blkdev_issue_zeroout's fallback), and
   they must read zeros all the same; ext4 refuses WRITE_ZEROES there
   (patch 2: the device has no write zeroes command), on both kernels,
   and allocates nothing, while mode 0 still allocates.  */
static void
nowz (void)
{
  char dev[512], q[600], w[64] = "?", path[4096];
  FILE *f;
  int fd, e;

  if (!device_of (dev, sizeof dev))
    {
      ok (0, "no write zeroes: the device of %s", dir);
      return;
    }
  snprintf (q, sizeof q, "/sys/block/%s/queue/write_zeroes_max_bytes",
	    strrchr (dev, '/') + 1);
  if ((f = fopen (q, "r")))
    {
      if (fgets (w, sizeof w, f))
	w[strcspn (w, "\n")] = 0;
      fclose (f);
    }
  ok (strcmp (w, "0") == 0, "%s has no write zeroes: write_zeroes_max_bytes "
      "0 (got %s)", dev, w);
  if (nofalloc)
    {
      fresh ();
      return;
    }
  fd = create ("k-nowz", path);
  e = falloc (fd, FALLOC_FL_WRITE_ZEROES, 0, MiB);
  ok (e == EOPNOTSUPP && fsize (fd) == 0 && fblocks (fd) == 0,
      "WRITE_ZEROES without write zeroes on the disk: EOPNOTSUPP, nothing "
      "allocated (got %s, size %lld, %lld bytes allocated)", ename (e),
      (long long) fsize (fd), (long long) fblocks (fd));
  e = falloc (fd, 0, 0, MiB);
  ok (e == 0 && fsize (fd) == MiB, "mode 0 without write zeroes on the "
      "disk: 0 (got %s, size %lld)", ename (e), (long long) fsize (fd));
  close (fd);
  unlink (path);
}

int
main (int argc, char **argv)
{
  if (argc != 4)
    {
      fprintf (stderr, "usage: kcheck stock|patched FS DIR\n");
      return 2;
    }
  kind = argv[1];
  fs = argv[2];
  dir = argv[3];
  patched = strcmp (kind, "patched") == 0;
  if (strcmp (fs, "ext2-nowz") == 0 || strcmp (fs, "ext4-nowz") == 0)
    {
      fs = strcmp (fs, "ext2-nowz") ? "ext4" : "ext2";
      nofalloc = strcmp (fs, "ext2") == 0;
      kalloc = patched && nofalloc;
      nowz ();
      return failed;
    }
  nofalloc = strcmp (fs, "ext2") == 0 || strcmp (fs, "exfat") == 0
	     || strcmp (fs, "jfs") == 0;
  kalloc = patched && strcmp (fs, "ext2") == 0;
  if (nofalloc)
    {
      alloc_modes ();
      mapped ();
      eof_tail ();
      fresh ();
      enospc ();
      killed ();
      writer ();
      if (strcmp (fs, "ext2") == 0)
	quota ();
    }
  other_modes ();
  if (strcmp (fs, "ext4") == 0)
    write_zeroes ();
  return failed;
}
