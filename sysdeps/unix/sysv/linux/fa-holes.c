/* Finding holes, without moving the caller's file offset: FIEMAP on
   the caller's descriptor where the filesystem has it, else SEEK_HOLE
   and SEEK_DATA on a descriptor of our own (fa-own.c); where neither can
   tell, whether the filesystem can hold holes at all (__fa_solid).

   What is found is true when asked, not when the hole is written: the
   windows that leaves are those of the ways (fa-map.c, fa-write.c).  The
   last FIEMAP reply is kept for the next question (__fa_next_hole), and
   forgotten (__fa_forget) where the file may have changed since.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include "fa-file.h"


/* FIEMAP over LEN bytes from FROM: the extents in FM, at most
   FA_EXTENTS.  */
static int
fiemap (int fd, int64_t from, uint64_t len, struct fa_extents *fm)
{
  /* All of it: valgrind does not know what the ioctl writes.  */
  memset (fm, 0, sizeof *fm);
  fm->m.fm_start = (uint64_t) from;
  fm->m.fm_length = len;
  fm->m.fm_extent_count = FA_EXTENTS;
  return ioctl (fd, FS_IOC_FIEMAP, &fm->m) < 0 ? errno : 0;
}

/* FIEMAP over the byte at FROM, asked to count extents, not list them:
   0 or its error.  A reply buffer (3.6 KiB) on the stack would add that
   much to what a signal handler's alternate stack must hold.  */
static int
fiemap_probe (int fd, int64_t from)
{
  struct fiemap m;

  memset (&m, 0, sizeof m);
  m.fm_start = (uint64_t) from;
  m.fm_length = 1;
  return ioctl (fd, FS_IOC_FIEMAP, &m) < 0 ? errno : 0;
}

/* Past the filesystem's largest file the kernel says EFBIG; so does
   FIEMAP from there (fiemap_prep), which also tells whether FIEMAP
   works here (F->fiemap).  Below 2 GiB, which every filesystem of note
   holds, it is not asked (small calls are frequent): a write past the
   limit gets EFBIG from the kernel, and the fallback undoes its part.  */
int
__fa_too_big (struct fa_file *f, int64_t end)
{
  int err;

  if (end <= INT32_MAX)
    return 0;
  /* vfs_fallocate refuses an end above s_maxbytes.  fiemap_prep refuses
     a start at or above it (Linux 5.18 and later): ask one byte (a
     length of 0 is EINVAL) from END - 1, so that a range ending exactly
     at s_maxbytes passes on xfs and btrfs (t-review maxbytes).  ext4
     refuses only a start above it, and from s_maxbytes itself cuts the
     length to 0, EINVAL: then ask from END (t-edge efbig).  */
  err = fiemap_probe (f->fd, end - 1);
  if (err == EINVAL)
    err = fiemap_probe (f->fd, end);
  f->fiemap = err == 0;
  return err == EFBIG ? EFBIG : 0;
}

/* Whether holes can be found in F's file: by FIEMAP (asked once), or by
   lseek on a descriptor of our own.  */
int
__fa_holes_known (struct fa_file *f)
{
  if (f->fiemap < 0)
    f->fiemap = fiemap_probe (f->fd, 0) == 0;
  return f->fiemap || f->seek >= 0;
}

/* The holes by lseek on a descriptor of our own (F->seek): as
   __fa_next_hole.  */
static int
seek_hole (const struct fa_file *f, int64_t *from, int64_t *to)
{
  int64_t h = lseek64 (f->seek, *from, SEEK_HOLE), d;

  /* ENXIO: *FROM lies past the end of file, all of it a hole.  */
  if (h < 0)
    return errno == ENXIO ? 1 : -1;
  /* tmpfs rounds the end-of-file hole of a file ending near INT64_MAX
     up to 2^63, which reads as negative: no hole in range either.  */
  if (h >= *to)
    return 0;
  d = lseek64 (f->seek, h, SEEK_DATA);
  if (d < 0 && errno != ENXIO)
    return -1;
  *from = h;
  if (d >= 0 && d < *to)
    *to = d;
  return 1;
}

/* Where extent E ends, INT64_MAX at most: the block of a file that
   ends at INT64_MAX ends at 2^63 (UBSan: a signed overflow on xfs and
   btrfs, t-review maxbytes under make check-asan).  */
static int64_t
extent_end (const struct fiemap_extent *e)
{
  uint64_t end = e->fe_logical + e->fe_length;

  return end > (uint64_t) INT64_MAX || end < e->fe_logical ? INT64_MAX
	 : (int64_t) end;
}

/* The first hole of [*FROM, TO) as [*FROM, *TO): 1, or 0 if there is
   none, or -1 if the filesystem cannot tell (no FIEMAP: tmpfs, FUSE,
   network filesystems) or the ioctl fails.  Extents in any state
   (unwritten, delayed allocation, inline) are allocated.  Without FIEMAP,
   SEEK_HOLE and SEEK_DATA on a descriptor of our own tell, if we have
   one (__fa_own).  */
int
__fa_next_hole (struct fa_file *f, int64_t *from, int64_t *to)
{
  struct fa_extents *fm = &f->fm;
  int64_t at = *from;

  if (!__fa_holes_known (f))
    return -1;
  if (!f->fiemap)
    return seek_hole (f, from, to);
  while (at < *to)
    {
      /* One reply describes [fm_from, fm_to): the walk over a file of
	 many holes asks once per FA_EXTENTS extents, not once per hole
	 (FIEMAP walks block maps from the start of its range).  */
      if (!(f->fm_from <= at && at < f->fm_to))
	{
	  if (fiemap (f->fd, at, (uint64_t) (*to - at), fm))
	    return -1;
	  unsigned n = fm->m.fm_mapped_extents;
	  const struct fiemap_extent *e = &fm->m.fm_extents[n ? n - 1 : 0];
	  f->fm_from = at;
	  f->fm_to = n == FA_EXTENTS && !(e->fe_flags & FIEMAP_EXTENT_LAST)
		     ? extent_end (e) : *to;
	}
      for (unsigned i = 0; i < fm->m.fm_mapped_extents; i++)
	{
	  const struct fiemap_extent *e = &fm->m.fm_extents[i];
	  int64_t start = (int64_t) e->fe_logical;

	  if (extent_end (e) <= at)
	    continue;
	  if (start > at)
	    {
	      *from = at;
	      *to = start < *to ? start : *to;
	      return 1;
	    }
	  at = extent_end (e);
	}
      /* Past the last extent the reply knows of: a hole up to its end,
	 or, if it ended at its last extent, ask again from there.  */
      if (at < f->fm_to && at < *to)
	{
	  *from = at;
	  *to = f->fm_to < *to ? f->fm_to : *to;
	  return 1;
	}
    }
  return 0;
}

/* Forget what FIEMAP said: the file may have changed since.  */
void
__fa_forget (struct fa_file *f)
{
  f->fm_from = f->fm_to = 0;
}

/* Whether the byte at AT reads as a hole right now, as close as we can
   ask before writing it: FIEMAP finds no extent there where it works,
   (or lseek, on a descriptor of our own), and, where the descriptor
   reads, the byte is zero (a page written through a mapping may not be
   allocated yet).  Nonzero if so, else 0,
   -1 with errno set if neither can be asked.  */
int
__fa_in_hole (struct fa_file *f, int64_t at)
{
  int64_t from = at, to = at + 1;
  int known;

  __fa_forget (f);
  known = __fa_next_hole (f, &from, &to);
  char c;
  ssize_t r;

  /* An extent past the end of file (xfs preallocates there) still
     needs the write that makes the size.  */
  if (known == 0)
    {
      struct stat64 st;
      return fstat64 (f->fd, &st) < 0 ? -1 : at >= st.st_size;
    }
  if ((f->flags & O_ACCMODE) != O_RDWR)
    {
      if (known > 0)
	return 1;
      errno = EBADF;
      return -1;
    }
  while ((r = pread64 (f->fd, &c, 1, at)) < 0 && errno == EINTR)
    ;
  return r < 0 ? -1 : r == 0 || c == 0;
}

/* Whether the fuseblk filesystem of F is exFAT, by its device's boot
   sector, the device named by /proc/self/mountinfo: 0 if so, 1 if not,
   2 if mountinfo cannot be read (not kept: it may be read next time).
   In __fa_aside's thread, so that opening and closing them drops no
   record lock the process holds on the device.  */
static int
exfat_device (void *arg)
{
  const struct fa_file *f = arg;
  char line[4096], dev[32], src[4096], sig[8];
  struct fa_lines m;
  struct stat64 st;
  int found = 0;

  if (__fa_lines_open (&m, "/proc/self/mountinfo") < 0)
    return 2;
  snprintf (dev, sizeof dev, " %u:%u ", major (f->st.st_dev),
	    minor (f->st.st_dev));
  while (!found && __fa_line (&m, line, sizeof line))
    {
      char *p = strstr (line, dev), *q = strstr (line, " - fuseblk ");
      found = p && q && p < q && sscanf (q + 11, "%4095s", src) == 1;
    }
  close (m.fd);
  if (!found)
    return 1;
  int d = open (src, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  found = d >= 0 && fstat64 (d, &st) == 0 && S_ISBLK (st.st_mode)
	  && st.st_rdev == f->st.st_dev && pread64 (d, sig, 8, 3) == 8
	  && memcmp (sig, "EXFAT   ", 8) == 0;
  if (d >= 0)
    close (d);
  return !found;
}

/* The FUSE mounts __fa_solid asked about (fa-file.c's
   __fa_mount_answer): a mount's device is its own for life, and asking
   (a thread, /proc/self/mountinfo read) cost a FUSE call 50 us or more.  */
static uint64_t solid_mount[FA_MOUNTS];

/* Where holes cannot be found: whether the filesystem cannot hold any
   (st_blocks cannot tell: tmpfs and xfs count blocks kept past the end
   of file, and a file may have those and holes both).  FAT and exFAT
   store every byte up to the size, by the kernel's drivers; exfat-fuse
   (fuseblk) is told by its device's boot sector, where the process can
   read the device (root, the disk group).  */
int
__fa_solid (const struct fa_file *f)
{
  unsigned long type = f->fs.f_type & 0xffffffffUL;
  int s;

  if (type == 0x2011bab0 || type == 0x4d44)
    return 1;
  if (type != 0x65735546)
    return 0;
  if ((s = __fa_mount_answer (solid_mount, f->mnt)) < 0)
    {
      /* Only an answer is kept: not a thread that could not be made,
	 nor a mountinfo that could not be read.  */
      int r = __fa_aside (exfat_device, (void *) f);

      s = r == 0;
      if (r == 0 || r == 1)
	__fa_mount_keep (solid_mount, f->mnt, s);
    }
  return s;
}
