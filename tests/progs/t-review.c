/* t-review DIR: defects an outside review found in the posix_fallocate
   fallback, each asserted as the kernel's own fallocate answers.  Run
   without fa-seccomp (the kernel's answers, where it has fallocate: what
   the assertions are measured against) and under fa-seccomp ENOSYS (the
   fallback):
   - maxbytes (item 2): on xfs and btrfs, whose largest file is
     INT64_MAX bytes, a range ending exactly there, (INT64_MAX - 4096,
     4096) and (INT64_MAX - 1, 1) on a new file: 0 and st_size INT64_MAX;
     one byte further, (INT64_MAX - 4095, 4096) and (INT64_MAX, 1): EFBIG
     and the size still 0;
   - fsize (item 3): RLIMIT_FSIZE 4 KiB (SIGXFSZ ignored), a 1 MiB sparse
     file made before, [66560, 132096) allocated: 0, the range all
     allocated, no block outside the pages it touches, the data kept (a
     fallback writing the sub-page blocks at the range's ends met the
     limit: EFBIG; the library faults those pages whole instead, as it
     says in fa-fill.c, while the kernel allocates the blocks exactly);
   - lease (item 4): a 64 KiB file with holes, opened once O_RDWR|O_DIRECT
     and once O_RDWR|O_APPEND, its open file holding a write lease, 2 KiB
     at 5 KiB (block-aligned, not page-aligned on 1 KiB blocks): 0, the
     range's blocks allocated and nothing outside its page, the lease
     still held (EBADF before: the writes needed a descriptor of ours);
   - outside (item 5): a 30 MiB sparse file read through with pread (the
     page cache then holds large folios), [7853057, 10179438): 0, no
     block outside the range's blocks allocated (44-49 KiB were on 1 KiB
     blocks).
   - appendgap (review 27, medium): an append-only file (chattr +a) of 4
     bytes, through O_WRONLY|O_APPEND, 8 KiB at 16 MiB + 4 KiB: the
     kernel 0, the range allocated and the gap a hole; the fallback,
     which only appends can get there, EBADF with nothing written (it
     appended the whole gap: 16 MiB outside the range, and on a small
     filesystem ENOSPC with the file left full of zeros); 8 KiB at the
     end of file: 0 either way, nothing outside the range.
   - straddle (review 28, medium): such a file of 65540 bytes with a hole
     at [4096, 65536), 128 KiB at 8 KiB: the kernel 0; the fallback,
     which cannot reach the hole through an append, EBADF with the size
     and blocks unchanged (it appended the part past the end first).
   - appenddata (review 33, medium): a file of 12 KiB of data made
     append-only after an O_RDWR|O_APPEND open, [4096, 8192) through it:
     0 (tmpfs said EBADF, with nothing to allocate).
   - appendrace (review 35, medium): such a file of 64 KiB of data,
     [64 KiB, +1 MiB) through O_RDWR|O_APPEND while another thread writes
     a byte at 576 KiB through a descriptor opened before chattr +a, 60
     rounds: 0 with no hole in the range, or EBADF (the byte came first,
     or between our appends: a hole inside); never 0 with the gap left a
     hole (10-75% of rounds did, by filesystem).
   Allocation is read by FIEMAP (unwritten extents too: what the kernel
   allocates reads as a hole to SEEK_DATA on ext4 and xfs), on tmpfs by
   st_blocks; at the filesystem's block size (statvfs).  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <fallocate.h>
#include "tcheck.h"

static const char *dir;

#define MAXEXT 4096
static int64_t ext_lo[MAXEXT], ext_hi[MAXEXT];
static int next;

/* FD's allocated extents within [0, its size), into ext_lo/ext_hi, by
   FIEMAP (synced; unwritten extents too).  0, or -1 without FIEMAP.  */
static int
extents (int fd)
{
  int64_t size = t_size (fd), at = 0;
  union
  {
    struct fiemap m;
    char buf[sizeof (struct fiemap) + 64 * sizeof (struct fiemap_extent)];
  } u;

  next = 0;
  while (at < size)
    {
      memset (&u, 0, sizeof u);
      u.m.fm_start = (uint64_t) at;
      u.m.fm_length = (uint64_t) (size - at);
      u.m.fm_flags = FIEMAP_FLAG_SYNC;
      u.m.fm_extent_count = 64;
      if (ioctl (fd, FS_IOC_FIEMAP, &u.m) < 0)
	return -1;
      if (u.m.fm_mapped_extents == 0)
	break;
      for (unsigned i = 0; i < u.m.fm_mapped_extents; i++)
	{
	  struct fiemap_extent *e = &u.m.fm_extents[i];
	  int64_t lo = (int64_t) e->fe_logical;
	  int64_t hi = lo + (int64_t) e->fe_length;
	  if (hi > size)
	    hi = size;
	  if (lo < hi && next < MAXEXT)
	    {
	      ext_lo[next] = lo;
	      ext_hi[next++] = hi;
	    }
	  at = (int64_t) (e->fe_logical + e->fe_length);
	  if (e->fe_flags & FIEMAP_EXTENT_LAST)
	    return 0;
	}
    }
  return 0;
}

static int64_t
down (int64_t x, int64_t bs)
{
  return x - x % bs;
}

static int64_t
up (int64_t x, int64_t bs)
{
  return x % bs ? x - x % bs + bs : x;
}

/* What a check of FD found: *MISSING bytes of [OFF, OFF + LEN)'s blocks
   not allocated, *OUTSIDE bytes allocated outside the range rounded out
   to GRAIN (BS: its blocks) and outside the KEEP ranges (pairs off, len;
   N of them, block-aligned) of data written before, all at blocks of
   BS.  Without FIEMAP (tmpfs, whose pages
   allocated by fallocate read as holes to SEEK_DATA) by st_blocks: the
   bytes short of or beyond the range's blocks and KEEP's.  */
static int
judge (int fd, int64_t off, int64_t len, int64_t bs, int64_t grain,
       const int64_t *keep, int n, int64_t *missing, int64_t *outside)
{
  int64_t lo = down (off, bs), hi = up (off + len, bs), size = t_size (fd);
  int64_t glo = down (off, grain), ghi = up (off + len, grain);

  if (hi > up (size, bs))
    hi = up (size, bs);
  *missing = hi - lo;
  *outside = 0;
  fsync (fd);
  if (extents (fd) < 0)
    {
      int64_t want = ghi - glo, have = t_alloc (fd);
      for (int k = 0; k < n; k++)
	want += keep[2 * k + 1];
      *missing = have < want ? want - have : 0;
      *outside = have > want ? have - want : 0;
      return 0;
    }
  for (int i = 0; i < next; i++)
    {
      int64_t a = down (ext_lo[i], bs), b = up (ext_hi[i], bs);
      int64_t c = a > lo ? a : lo, d = b < hi ? b : hi;
      if (c < d)
	*missing -= d - c;
      for (int64_t x = a; x < b; x += bs)
	{
	  int kept = x >= glo && x < ghi;
	  for (int k = 0; k < n && !kept; k++)
	    kept = x + bs > keep[2 * k] && x < keep[2 * k] + keep[2 * k + 1];
	  *outside += kept ? 0 : bs;
	}
    }
  return 0;
}

static int64_t
block_size (int fd)
{
  struct statvfs v;
  return fstatvfs (fd, &v) == 0 && v.f_bsize > 0 ? (int64_t) v.f_bsize : 4096;
}

/* Item 2.  */
static void
maxbytes (void)
{
  static const struct
  {
    int64_t off, len;
    int want;
  } cases[] = {
    { INT64_MAX - 4096, 4096, 0 },
    { INT64_MAX - 1, 1, 0 },
    { INT64_MAX - 4095, 4096, EFBIG },
    { INT64_MAX, 1, EFBIG },
  };
  char path[4096];
  struct statfs s;
  int fd = t_create (dir, "maxbytes", path, sizeof path);
  int ok = fstatfs (fd, &s) == 0;
  unsigned long type = ok ? (unsigned long) s.f_type & 0xffffffffUL : 0;

  close (fd);
  unlink (path);
  if (type != 0x58465342UL && type != 0x9123683eUL)
    {
      t_unsupported ("maxbytes: the largest file is INT64_MAX bytes on xfs "
		     "and btrfs only (f_type 0x%lx)", type);
      return;
    }
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      fd = t_create (dir, "maxbytes", path, sizeof path);
      int r = posix_fallocate64 (fd, cases[i].off, cases[i].len);
      int64_t size = t_size (fd);
      int64_t want = cases[i].want ? 0 : INT64_MAX;
      t_ok (r == cases[i].want && size == want,
	    "maxbytes: (INT64_MAX - %lld, %lld) on a new file: %s and size "
	    "%lld (got %d, size %lld)",
	    (long long) (INT64_MAX - cases[i].off), (long long) cases[i].len,
	    cases[i].want ? "EFBIG" : "0", (long long) want, r,
	    (long long) size);
      close (fd);
      unlink (path);
    }
}

/* Item 3.  */
static void
fsize (void)
{
  char path[4096];
  int fd = t_create (dir, "fsize", path, sizeof path);
  const int64_t size = 1 << 20, off = 66560, len = 65536;
  const int64_t keep[] = { 0, 4096, size - 4096, 4096 };
  int64_t bs = block_size (fd), missing, outside;
  int64_t page = sysconf (_SC_PAGESIZE);

  t_put (fd, 0, 4096, 70);
  t_put (fd, size - 4096, 4096, 71);
  fsync (fd);
  struct rlimit old, low;
  void (*was) (int) = signal (SIGXFSZ, SIG_IGN);
  getrlimit (RLIMIT_FSIZE, &old);
  low.rlim_cur = 4096;
  low.rlim_max = old.rlim_max;
  setrlimit (RLIMIT_FSIZE, &low);
  int r = posix_fallocate64 (fd, off, len);
  setrlimit (RLIMIT_FSIZE, &old);
  signal (SIGXFSZ, was);
  if (judge (fd, off, len, bs, page, keep, 2, &missing, &outside) < 0)
    t_unsupported ("fsize: the allocation cannot be read: %s",
		   strerror (errno));
  else
    t_ok (r == 0 && missing == 0 && outside == 0 && t_size (fd) == size
	  && t_same (fd, 0, 4096, 70) && t_same (fd, size - 4096, 4096, 71),
	  "fsize: RLIMIT_FSIZE 4096, [66560, 132096) of a 1 MiB sparse file, "
	  "blocks of %lld: 0 (got %d), the range allocated (%lld bytes "
	  "missing), nothing outside its pages (%lld bytes), size and data "
	  "kept",
	  (long long) bs, r, (long long) missing, (long long) outside);
  close (fd);
  unlink (path);
}

/* Item 4.  */
static void
lease (int flag, const char *name)
{
  char path[4096];
  int fd = t_create (dir, "lease", path, sizeof path);
  const int64_t size = 64 << 10, off = 5120, len = 2048;
  const int64_t keep[] = { 0, 4096, size - 4096, 4096 };
  int64_t bs = block_size (fd), missing = -1, outside = -1;
  int64_t page = sysconf (_SC_PAGESIZE);

  t_put (fd, 0, 4096, 72);
  t_put (fd, size - 4096, 4096, 73);
  fsync (fd);
  close (fd);
  /* The only open file of it, or the lease is refused (EAGAIN).  */
  int d = open (path, O_RDWR | O_LARGEFILE | flag);
  if (d < 0 || fcntl (d, F_SETLEASE, F_WRLCK) < 0)
    {
      t_unsupported ("lease: O_RDWR|%s with a write lease: %s", name,
		     strerror (errno));
      if (d >= 0)
	close (d);
      unlink (path);
      return;
    }
  int r = posix_fallocate64 (d, off, len);
  int held = fcntl (d, F_GETLEASE);
  int judged = judge (d, off, len, bs, page, keep, 2, &missing, &outside);
  fcntl (d, F_SETLEASE, F_UNLCK);
  close (d);
  fd = open (path, O_RDONLY);
  t_ok (r == 0 && judged == 0 && missing == 0 && outside == 0
	&& held == F_WRLCK && t_size (fd) == size
	&& t_same (fd, 0, 4096, 72) && t_same (fd, size - 4096, 4096, 73),
	"lease: 2 KiB at 5 KiB of a 64 KiB file with holes through O_RDWR|%s, "
	"its open file holding a write lease, blocks of %lld: 0 (got %d), "
	"the range's blocks allocated (%lld bytes missing), nothing outside "
	"its pages (%lld bytes), the lease still held (F_GETLEASE %d)", name,
	(long long) bs, r, (long long) missing, (long long) outside,
	held);
  close (fd);
  unlink (path);
}

/* Item 5.  */
static void
outside (void)
{
  static char buf[1 << 20];
  char path[4096];
  int fd = t_create (dir, "outside", path, sizeof path);
  const int64_t size = 30 << 20, off = 7853057, len = 2326381;
  const int64_t keep[] = { 0, 4096, size - 4096, 4096 };
  int64_t bs = block_size (fd), missing, outside;

  t_put (fd, 0, 4096, 74);
  t_put (fd, size - 4096, 4096, 75);
  fsync (fd);
  for (int64_t p = 0; p < size; p += sizeof buf)
    if (pread64 (fd, buf, sizeof buf, p) < 0)
      break;
  int r = posix_fallocate64 (fd, off, len);
  if (judge (fd, off, len, bs, bs, keep, 2, &missing, &outside) < 0)
    t_unsupported ("outside: the allocation cannot be read: %s",
		   strerror (errno));
  else
    t_ok (r == 0 && missing == 0 && outside == 0 && t_size (fd) == size
	  && t_same (fd, 0, 4096, 74) && t_same (fd, size - 4096, 4096, 75),
	  "outside: [7853057, 10179438) of a 30 MiB sparse file read through "
	  "first, blocks of %lld: 0 (got %d), the range's blocks "
	  "allocated (%lld bytes missing), none outside (%lld bytes), data "
	  "kept", (long long) bs, r, (long long) missing,
	  (long long) outside);
  close (fd);
  unlink (path);
}

/* A second review's item 1: xfs frees a deleted file's blocks in a
   worker, and statfs counts them only once it ran.  A file of 60% of
   the free space written and deleted, then at once a call for 60% of
   it: 0, as from the kernel (the fallback's check of the free space
   said ENOSPC in 4 of 5 rounds).  Five rounds, on xfs only.  */
static void
freed (void)
{
  static char buf[1 << 20];
  char path[4096], path2[4096];
  struct statfs fs;
  struct statvfs v;
  int bad = 0, last = 0;

  if (statfs (dir, &fs) < 0 || fs.f_type != 0x58465342
      || statvfs (dir, &v) < 0)
    {
      t_unsupported ("freed: not xfs");
      return;
    }
  int64_t n = (int64_t) v.f_bavail * (int64_t) v.f_frsize / 10 * 6;
  n -= n % sizeof buf;
  for (int round = 0; round < 5; round++)
    {
      int fd = t_create (dir, "freed-big", path, sizeof path);
      for (int64_t p = 0; p < n; p += sizeof buf)
	if (pwrite64 (fd, buf, sizeof buf, p) != (ssize_t) sizeof buf)
	  break;
      fsync (fd);
      close (fd);
      unlink (path);
      fd = t_create (dir, "freed", path2, sizeof path2);
      int r = posix_fallocate64 (fd, 0, n);
      if (r)
	bad++, last = r;
      close (fd);
      unlink (path2);
    }
  t_ok (bad == 0, "freed: xfs, 5 rounds of a file of %lld bytes deleted, "
	"then as many allocated at once: 0 each time (%d failed, last %d)",
	(long long) n, bad, last);
}

/* A second review's item 2: where no thread can be made (RLIMIT_NPROC
   0 for a user other than root), a call that needs the fallback's
   thread (an O_WRONLY descriptor of a file with holes) gets ENOMEM, as
   libfallocate(3) says, and changes nothing; the kernel's fallocate 0.
   In a child that takes the user nobody (65534).  */
static void
nproc (void)
{
  char path[4096];
  int fd = t_create (dir, "nproc", path, sizeof path), st = 0;
  int filtered = t_filtered ();

  t_put (fd, 0, 4096, 76);
  ftruncate (fd, 1 << 20);
  fchmod (fd, 0666);
  close (fd);
  pid_t pid = fork ();
  if (pid == 0)
    {
      struct rlimit none = { 0, 0 };
      int d = -1, r = -1;

      if (setgid (65534) == 0 && setuid (65534) == 0
	  && (d = open (path, O_WRONLY)) >= 0
	  && setrlimit (RLIMIT_NPROC, &none) == 0)
	r = posix_fallocate64 (d, 0, 1 << 20);
      _exit (d < 0 ? 100 : r == ENOMEM ? 1 : r == 0 ? 0 : 2);
    }
  if (pid < 0 || waitpid (pid, &st, 0) != pid || !WIFEXITED (st))
    t_ok (0, "nproc: the child ran (status %d)", st);
  else if (WEXITSTATUS (st) == 100)
    t_unsupported ("nproc: the user nobody cannot open the file here");
  else
    {
      fd = open (path, O_RDONLY);
      int code = WEXITSTATUS (st), want = filtered ? 1 : 0;
      t_ok (code == want && t_size (fd) == 1 << 20
	    && t_same (fd, 0, 4096, 76),
	    "nproc: RLIMIT_NPROC 0, O_WRONLY with a hole: %s (child %d), "
	    "size and data kept", filtered ? "ENOMEM" : "0", code);
      close (fd);
    }
  unlink (path);
}

/* A third and a fourth review: as root, a request between f_bavail and
   f_bfree was let through, and wrote until ENOSPC: on btrfs f_bfree
   counts space that data cannot use (180 MiB written), on ext4 the
   filesystem's own reserve, which root cannot use either (220 MiB).
   An empty file, a request halfway between f_bavail and f_bfree: the
   fallback says ENOSPC before writing (the size kept, under 1 MiB
   dirtied by write or fault, /proc/self/io's write_bytes, and f_bavail
   right after as before, within a tenth); the kernel may let root have
   ext4's reserve for root (0), else ENOSPC with what it allocated
   left.  btrfs, ext2, ext3, ext4, as root.  */
static void
root_band (void)
{
  char path[4096];
  struct statfs fs;
  struct statvfs v, after;

  if (statfs (dir, &fs) < 0 || geteuid () != 0 || statvfs (dir, &v) < 0
      || (fs.f_type != 0x9123683e && fs.f_type != 0xef53)
      || v.f_bfree <= v.f_bavail)
    {
      t_unsupported ("root band: not btrfs or ext2/3/4 as root with f_bfree "
		     "above f_bavail");
      return;
    }
  int fd = t_create (dir, "root-band", path, sizeof path);
  syncfs (fd);
  statvfs (dir, &v);
  int64_t len = ((int64_t) v.f_bavail
		 + (int64_t) (v.f_bfree - v.f_bavail) / 2)
		* (int64_t) v.f_frsize;
  long long w0 = t_proc_field ("/proc/self/io", "write_bytes: ");
  int r = posix_fallocate64 (fd, 0, len);
  long long w1 = t_proc_field ("/proc/self/io", "write_bytes: ");
  statvfs (dir, &after);
  int kept = t_size (fd) == 0 && w1 - w0 < (1 << 20)
	     && after.f_bavail >= v.f_bavail - v.f_bavail / 10;
  t_ok (t_filtered () ? r == ENOSPC && kept : r == 0 || r == ENOSPC,
	"root band: a request of %lld bytes, between f_bavail and f_bfree: "
	"ENOSPC (got %d), size kept (%lld), nothing written (%lld bytes "
	"dirtied; f_bavail %llu before, %llu after)%s", (long long) len, r,
	(long long) t_size (fd), w1 - w0,
	(unsigned long long) v.f_bavail, (unsigned long long) after.f_bavail,
	t_filtered () ? "" : " (the kernel: 0 or ENOSPC, its partial "
	"allocation left)");
  close (fd);
  unlink (path);
}

/* An append-only file (chattr +a) NAME in PATH holding 4 bytes at 0 and,
   with HOLE, 4 more at 64 KiB (a hole between): its descriptor, and in
   *W one opened O_WRONLY|O_APPEND; -1 where the attribute cannot be
   set (UNSUPPORTED said).  Undone by appendless.  */
static int
appendonly (const char *name, char *path, size_t size, int hole, int *w)
{
  int fd = t_create (dir, name, path, size), e;

  t_put (fd, 0, 4, 72);
  if (hole)
    t_put (fd, 65536, 4, 73);
  if ((e = t_attr (fd, FS_APPEND_FL, 1)))
    {
      t_unsupported ("%s: append-only file: %s", name, strerror (e));
      close (fd);
      unlink (path);
      return -1;
    }
  *w = open (path, O_WRONLY | O_APPEND);
  return fd;
}

static void
appendless (int fd, int w, const char *path)
{
  close (w);
  t_attr (fd, FS_APPEND_FL, 0);
  close (fd);
  unlink (path);
}

/* Review 27's medium (review 26's D3).  */
static void
appendgap (void)
{
  char path[4096];
  int w, r, r2, fd = appendonly ("appendgap", path, sizeof path, 0, &w);
  const int64_t off = (16 << 20) + 4096, len = 8192;
  struct stat st;

  if (fd < 0)
    return;
  r = posix_fallocate64 (w, off, len);
  fstat (fd, &st);
  int64_t size = st.st_size, used = (int64_t) st.st_blocks * 512;
  t_ok ((r == 0 && size == off + len) || (r == EBADF && size == 4),
	"appendgap: an append-only file of 4 bytes, O_WRONLY|O_APPEND, "
	"[%lld, +%lld): 0 and the range's end, or EBADF and nothing written "
	"(got %d, size %lld)", (long long) off, (long long) len, r,
	(long long) size);
  t_ok (used < (1 << 20) && t_same (fd, 0, 4, 72),
	"appendgap: less than 1 MiB allocated, the range but not the gap "
	"(got %lld bytes), data kept", (long long) used);
  fstat (fd, &st);
  r2 = posix_fallocate64 (w, st.st_size, len);
  int64_t was = st.st_size;
  fstat (fd, &st);
  t_ok (r2 == 0 && st.st_size == was + len
	&& (int64_t) st.st_blocks * 512 < (1 << 20),
	"appendgap: [the end of file, +%lld): 0, size %lld, less than 1 MiB "
	"allocated (got %d, size %lld, %lld bytes)", (long long) len,
	(long long) (was + len), r2, (long long) st.st_size,
	(long long) st.st_blocks * 512);
  appendless (fd, w, path);
}

/* Review 28's medium: a range of an append-only file from a hole inside
   it to past its end.  */
static void
straddle (void)
{
  char path[4096];
  int w, r, fd = appendonly ("straddle", path, sizeof path, 1, &w);
  const int64_t off = 8192, len = 131072, size0 = 65540;
  struct stat st;

  if (fd < 0)
    return;
  fstat (fd, &st);
  int64_t used0 = (int64_t) st.st_blocks * 512;
  r = posix_fallocate64 (w, off, len);
  fstat (fd, &st);
  int64_t size = st.st_size, used = (int64_t) st.st_blocks * 512;
  t_ok ((r == 0 && size == off + len && used >= len)
	|| (r == EBADF && size == size0 && used == used0),
	"straddle: an append-only file of %lld bytes with a hole at [4096, "
	"65536), O_WRONLY|O_APPEND, [%lld, +%lld): 0, the range's end and "
	"its blocks, or EBADF with size and blocks unchanged (got %d, size "
	"%lld, %lld bytes allocated, %lld before)", (long long) size0,
	(long long) off, (long long) len, r, (long long) size,
	(long long) used, (long long) used0);
  t_ok (t_same (fd, 0, 4, 72) && t_same (fd, 65536, 4, 73),
	"straddle: data kept");
  appendless (fd, w, path);
}

/* Review 33's medium: a file with no hole, made append-only after an
   O_RDWR|O_APPEND open: a range over its data has nothing to allocate.
   On tmpfs, whose mapping way such a file refuses and whose holes only a
   descriptor of the library's own finds, it said EBADF.  */
static void
appenddata (void)
{
  char path[4096];
  int fd = t_create (dir, "appenddata", path, sizeof path), w, r, e;

  t_put (fd, 0, 12288, 74);
  w = open (path, O_RDWR | O_APPEND);
  if ((e = t_attr (fd, FS_APPEND_FL, 1)))
    t_unsupported ("appenddata: append-only file: %s", strerror (e));
  else
    {
      r = posix_fallocate64 (w, 4096, 4096);
      t_ok (r == 0 && t_size (fd) == 12288 && t_same (fd, 0, 12288, 74),
	    "appenddata: an append-only file of data through O_RDWR|"
	    "O_APPEND, [4096, +4096): 0, size and data unchanged (got %d, "
	    "size %lld)", r, (long long) t_size (fd));
      t_attr (fd, FS_APPEND_FL, 0);
    }
  close (w);
  close (fd);
  unlink (path);
}

/* Review 35's D1: another writer extends an append-only file during a
   call that appends to it.  */
struct racer
{
  int fd, delay;
};

static void *
racer (void *arg)
{
  struct racer *r = arg;

  usleep ((useconds_t) r->delay);
  if (pwrite (r->fd, "B", 1, 576 << 10) != 1)
    perror ("t-review: appendrace pwrite");
  return NULL;
}

static void
appendrace (void)
{
  const int64_t off = 65536, len = 1 << 20;
  int bad = 0, ebadf = 0, other = 0, r = 0, rounds;
  char path[4096], what[200] = "";

  for (rounds = 0; rounds < 60; rounds++)
    {
      int fd = t_create (dir, "appendrace", path, sizeof path), e;
      struct racer rc = { open (path, O_RDWR), rounds % 2 ? 100 : 0 };
      int w = open (path, O_RDWR | O_APPEND);
      pthread_t th;

      t_put (fd, 0, 65536, 75);
      if ((e = t_attr (fd, FS_APPEND_FL, 1)))
	{
	  t_unsupported ("appendrace: append-only file: %s", strerror (e));
	  close (rc.fd);
	  close (w);
	  close (fd);
	  unlink (path);
	  return;
	}
      pthread_create (&th, NULL, racer, &rc);
      r = posix_fallocate64 (w, off, len);
      pthread_join (th, NULL);
      fsync (fd);
      int64_t size = t_size (fd);
      /* Without FIEMAP (tmpfs, where the kernel's reserved pages read as
	 holes to SEEK_HOLE), a hole is a page short of the size.  */
      int full = extents (fd) < 0 ? t_alloc (fd) >= up (size, 4096)
		 : t_nohole (fd, off, len);
      if (!t_same (fd, 0, 65536, 75) || (r == 0 && !full))
	{
	  bad++;
	  snprintf (what, sizeof what, "round %d: got %d, size %lld, %lld "
		    "bytes allocated", rounds, r, (long long) size,
		    (long long) t_alloc (fd));
	}
      ebadf += r == EBADF;
      other += r != 0 && r != EBADF;
      t_attr (fd, FS_APPEND_FL, 0);
      close (rc.fd);
      close (w);
      close (fd);
      unlink (path);
    }
  t_ok (bad == 0 && other == 0, "appendrace: an append-only file of 64 KiB, "
	"O_RDWR|O_APPEND, [%lld, +%lld) while a byte is written at 576 KiB, "
	"%d rounds: 0 with no hole in the range, or EBADF, data kept (%d "
	"EBADF, %d other errors, %d bad%s%s)", (long long) off,
	(long long) len, rounds, ebadf, other, bad, bad ? ": " : "", what);
}

int
main (int argc, char **argv)
{
  dir = argc > 1 ? argv[1] : ".";
  if (t_filtered () == 0)
    printf ("# the kernel's fallocate first (the fallback where it refuses)\n");
  maxbytes ();
  fsize ();
  lease (O_DIRECT, "O_DIRECT");
  lease (O_APPEND, "O_APPEND");
  outside ();
  freed ();
  nproc ();
  root_band ();
  appendgap ();
  straddle ();
  appenddata ();
  appendrace ();
  return t_done ();
}
