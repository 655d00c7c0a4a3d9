/* Allocation by writing zeros, for filesystems (EOPNOTSUPP) and kernels or
   sandboxes (ENOSYS) where fallocate cannot allocate.

   Guarantee: no byte that holds data is ever changed.

   Past the end of file, for a range that starts inside the file: zeros
   appended in 1 MiB writes through an O_APPEND descriptor (the caller's,
   or one opened on /proc/self/fd/N).  An append lands where the file ends
   at that moment, so it cannot overwrite a concurrent writer's data.

   Holes, two ways:
   - Mapping (Linux 5.14 and later, a local filesystem, a descriptor that
     is or can be reopened O_RDWR): the pages of each hole are faulted in for writing through a
     shared mapping (madvise MADV_POPULATE_WRITE), 64 MiB windows kept
     across holes.  The filesystem allocates them as for a write, and no
     byte is written: what a concurrent writer puts there cannot be lost,
     whenever it comes.  A range that starts past the end of file gets one
     zero byte at its end, which makes the rest a hole.
   - Writing (elsewhere, or if a mapping or a fault fails, or leaves the
     hole there): one zero byte per block, each written at an offset where
     lseek SEEK_HOLE has just found a hole; past the end of file without an
     append descriptor, zeros in 1 MiB writes while the size is still the
     one we made (an fstat before every write tells).

   Race windows, exactly (tests/progs/t-race measures them):
   - appending: none that loses data; a writer that extends the file
     between our fstat and our append gets our zeros after its data, and
     the file ends up to 1 MiB longer than the range.
   - mapping, range starting past the end of file: a writer that writes
     the last byte of the range between our fstat and our one-byte write
     there loses that byte.
   - writing: a writer that fills a hole block between our check and our
     write loses one byte, the one we write (glibc's pread/pwrite probe has
     this window, per block).  A writer that writes past the end of file
     between our fstat and our next 1 MiB write loses what it wrote into
     that MiB.
   - failure: a writer that writes into the zeros we added, without
     extending the file further, loses that when the truncation undoes our
     extension (one that extends it further keeps the size: we truncate
     only a size that is still ours).

   Filesystems that cannot report holes (SEEK_HOLE finds none in a file
   whose st_blocks say it is sparse) are probed by reading one byte per
   block instead, by the writing way: a block whose byte is zero gets a
   zero written there.

   Descriptors of our own are never opened while the process holds a
   POSIX record lock on the file or the caller a lease on it: closing one
   would drop the locks, opening one would break the lease.  Then only the
   caller's descriptor is used, which limits the ways as for a descriptor
   that cannot be reopened.

   The file offset is left as it was: SEEK_HOLE and SEEK_DATA are asked
   through a descriptor of our own (/proc/self/fd/N opened read-only), or,
   without one, the offset is put back before returning.

   O_WRONLY descriptors work (lseek needs no read access).  O_APPEND ones
   would make pwrite append, so we write through a second descriptor
   opened on /proc/self/fd/N without O_APPEND; if that cannot be had, only
   a pure extension (which appending does exactly) is possible, else EBADF.
   O_SYNC and O_DSYNC ones would wait for the disk at each of thousands of
   small writes, so we write through such a second descriptor without them
   too and sync once at the end: the zeros are as durable on return either
   way.  O_DIRECT ones refuse one-byte writes (EINVAL, glibc's fallback
   fails so): the second descriptor is opened without O_DIRECT too.

   Failure part way (ENOSPC, EIO, EFBIG): the size we added is truncated
   away again, unless someone else has extended the file further; blocks
   filled inside holes stay allocated and read as zeros, as before.  A
   request larger than the free space fails with ENOSPC before any write.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/fs.h>
#include <fallocate.h>
#include "fa-internal.h"

#define CHUNK (1 << 20)
#define WINDOW (64 << 20)	/* mapped at a time */
/* Not const: .bss costs nothing, .rodata would put a megabyte of zeros in
   the library file.  Never written.  */
static char zeros[CHUNK];

/* Whether descriptors of our own may be opened on the file and closed
   again.  Closing any descriptor of a file drops every POSIX record lock
   (F_SETLK) that the process holds on it, SQLite's for one, and opening
   one breaks the process's own lease: where either is held, only FD is
   used.  Two fcntl calls answer the common case: no lease, and no lock
   that would conflict with a whole-file write lock of another owner (an
   open file description's, F_OFD_GETLK), or one that is ours.  Anything
   else is settled by /proc/locks, which names each lock's kind, holder
   and inode number (a match on another filesystem's inode only costs the
   slower way); reading it costs milliseconds, and qemu-user does not
   translate F_GETLEASE's answer on alpha, hppa and sparc64.  */
static int
may_reopen (int fd, const struct stat64 *st)
{
  struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  int lease = fcntl (fd, F_GETLEASE), pid, ours = 0;
  char line[256], kind[8];
  unsigned long long ino;
  FILE *f;

  if (fcntl (fd, F_OFD_GETLK, &lk) == 0)
    {
      if (lk.l_type != F_UNLCK && lk.l_pid == getpid ())
	return 0;
      if (lk.l_type == F_UNLCK && (lease == F_UNLCK || lease < 0))
	return 1;
    }
  /* Without /proc, no reopening succeeds anyway.  */
  if ((f = fopen ("/proc/locks", "re")) == NULL)
    return 1;
  while (!ours && fgets (line, sizeof line, f))
    ours = sscanf (line, "%*d: %7s %*s %*s %d %*x:%*x:%llu", kind, &pid,
		   &ino) == 3
	   && (strcmp (kind, "POSIX") == 0 || strcmp (kind, "LEASE") == 0)
	   && pid == getpid () && ino == (unsigned long long) st->st_ino;
  fclose (f);
  return !ours;
}

/* The checks of vfs_fallocate, in its order, so that a call gets the same
   answer whether the kernel or this file decides.  A directory cannot be
   open for writing, so EISDIR cannot arise here; block devices (fixed
   size) and all other files get ENODEV, as with glibc.  MODE is one that
   the kernel accepts.  Sets *SOLO if no descriptor of ours may be opened
   on the file.  */
int
__fa_check (int fd, int mode, int64_t off, int64_t len, int *flags,
	    struct stat64 *st, int *solo)
{
  int attr;

  *flags = fcntl (fd, F_GETFL);
  if (*flags < 0 || (*flags & O_PATH))
    return EBADF;
  if (off < 0 || len <= 0)
    return EINVAL;
  /* Access mode 3 reads and writes nothing (FMODE_WRITE is not set).  */
  if (((*flags & O_ACCMODE) != O_WRONLY && (*flags & O_ACCMODE) != O_RDWR)
      || fstat64 (fd, st) < 0)
    return EBADF;
  if (S_ISFIFO (st->st_mode))
    return ESPIPE;
  if (!S_ISREG (st->st_mode))
    return ENODEV;
  if (ioctl (fd, FS_IOC_GETFLAGS, &attr) == 0
      && ((attr & FS_IMMUTABLE_FL)
	  || ((mode & ~FALLOC_FL_KEEP_SIZE) && (attr & FS_APPEND_FL))))
    return EPERM;
  /* An active swap file: the kernel refuses every write to it with
     ETXTBSY, even one of no bytes, which changes nothing anywhere.  xfs
     answers an empty write before that check: there a request with
     nothing to write (a swap file has no holes) returns 0.  */
  if (pwrite64 (fd, "", 0, off) < 0 && errno == ETXTBSY)
    return ETXTBSY;
  if (off > INT64_MAX - len)
    return EFBIG;
  *solo = !may_reopen (fd, st);
  return 0;
}

/* A second descriptor for the same file, or -1 (at once if SOLO).  */
int
__fa_reopen (int fd, int flags, const struct stat64 *st, int solo)
{
  char path[32];
  struct stat64 again;
  int nfd;

  if (solo)
    return -1;
  snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
  /* O_LARGEFILE: we are built without _FILE_OFFSET_BITS=64, and on 32-bit
     ports a descriptor without it fails with EFBIG past 2 GiB.  */
  nfd = open (path, flags | O_CLOEXEC | O_NOCTTY | O_LARGEFILE);
  if (nfd >= 0 && (fstat64 (nfd, &again) < 0 || again.st_dev != st->st_dev
		   || again.st_ino != st->st_ino))
    {
      close (nfd);
      nfd = -1;
    }
  return nfd;
}

/* The descriptor to pwrite through: one of our own where FD's flags
   would get in the way (pwrite on O_APPEND appends; O_DIRECT refuses
   unaligned buffers; O_SYNC and O_DSYNC wait for the disk at each write,
   where __fa_sync waits once; a 32-bit caller's descriptor without
   O_LARGEFILE stops at 2 GiB), else FD, which is also the answer when
   none can be had.  */
int
__fa_writer (int fd, int flags, const struct stat64 *st, int solo)
{
  int wfd = -1;

  if ((flags & (O_APPEND | O_DSYNC | O_DIRECT))
      || (O_LARGEFILE != 0 && !(flags & O_LARGEFILE)))
    wfd = __fa_reopen (fd, O_WRONLY, st, solo);
  return wfd < 0 ? fd : wfd;
}

/* lseek moves the offset of the open file description, which is the
   caller's: seek on a descriptor of our own, or else put it back.  */
int
__fa_seeker (int fd, const struct stat64 *st, int solo, int64_t *pos)
{
  int rfd = __fa_reopen (fd, O_RDONLY, st, solo);

  *pos = -1;
  if (rfd < 0)
    {
      rfd = fd;
      *pos = lseek64 (fd, 0, SEEK_CUR);
    }
  return rfd;
}

/* Writes through our own descriptors and through a mapping do not wait
   for the disk: a caller's O_SYNC or O_DSYNC (FLAGS) asks for it.  */
int
__fa_sync (int fd, int flags)
{
  if ((flags & O_DSYNC)
      && ((flags & O_SYNC) == O_SYNC ? fsync (fd) : fdatasync (fd)) < 0)
    return errno;
  return 0;
}

/* Past the filesystem's largest file the kernel says EFBIG; lseek refuses
   the same offsets.  RFD's offset is ours, or put back by __fa_unseek.  */
int
__fa_too_big (int rfd, int64_t end)
{
  return lseek64 (rfd, end, SEEK_SET) < 0 && errno == EINVAL;
}

void
__fa_unseek (int fd, int rfd, int64_t pos)
{
  if (rfd != fd)
    close (rfd);
  else if (pos >= 0)
    lseek64 (fd, pos, SEEK_SET);
}

int
__fa_put_zeros (int fd, int64_t pos, size_t n)
{
  while (n > 0)
    {
      ssize_t w = pwrite64 (fd, zeros, n < CHUNK ? n : CHUNK, pos);
      if (w < 0 && errno != EINTR)
	return errno;
      if (w == 0)
	return EIO;
      if (w > 0)
	{
	  pos += w;
	  n -= (size_t) w;
	}
    }
  return 0;
}

/* 1 if the byte at AT is in a hole (or past the end), 0 if in data, -1.  */
static int
is_hole (int rfd, int64_t at, int blind)
{
  if (blind)
    {
      char c;
      ssize_t r;

      while ((r = pread64 (rfd, &c, 1, at)) < 0 && errno == EINTR)
	;
      return r < 0 ? -1 : r == 0 || c == 0;
    }
  /* SEEK_HOLE, not SEEK_DATA: from inside a hole, SEEK_DATA walks to the
     hole's end (block by block on ext2), SEEK_HOLE stops at once.  */
  int64_t h = lseek64 (rfd, at, SEEK_HOLE);
  if (h == -1)
    return errno == ENXIO ? 1 : -1;
  return h == at;
}

/* Allocate each block of [from, to) that is a hole right now, by writing
   one zero byte: the last byte of the block within the range, so that the
   last write past the end of file makes the size reach TO.  */
static int
fill_blocks (int rfd, int wfd, int64_t from, int64_t to, int64_t bs, int blind)
{
  /* Steps computed from TO - B: B + BS overflows in the last block
     below INT64_MAX.  */
  for (int64_t b = from - from % bs; b < to; b += to - b > bs ? bs : to - b)
    {
      int64_t last = (to - b > bs ? b + bs : to) - 1;
      int hole = is_hole (rfd, last, blind);
      if (hole < 0)
	return errno;
      if (hole && __fa_put_zeros (wfd, last, 1))
	return errno;
    }
  return 0;
}

/* A window of the file mapped shared, kept across the holes it covers:
   a mapping per hole costs more than its faults in a file of small holes.
   FD < 0: no mapping way.  */
struct window
{
  int fd;
  char *p;
  int64_t at;
  int checked;			/* that populating fills holes */
};

/* Allocate the pages of [from, to), which lie inside the file, without
   writing a byte: 0, or -1 if that cannot be done (an error of the
   filesystem, ENOSPC among them, shows as a failed fault: EFAULT).  */
static int
populate (struct window *w, int64_t from, int64_t to)
{
  from -= from % sysconf (_SC_PAGESIZE);
  while (from < to)
    {
      int64_t at = from - from % WINDOW;
      int64_t n = (to - at < WINDOW ? to : at + WINDOW) - from;

      if (w->p == NULL || w->at != at)
	{
	  if (w->p != NULL)
	    munmap (w->p, WINDOW);
	  w->p = mmap64 (NULL, WINDOW, PROT_READ | PROT_WRITE, MAP_SHARED,
			 w->fd, at);
	  if (w->p == MAP_FAILED)
	    {
	      w->p = NULL;
	      return -1;
	    }
	  w->at = at;
	}
      if (madvise (w->p + (from - at), (size_t) n, MADV_POPULATE_WRITE) < 0)
	return -1;
      from += n;
    }
  return 0;
}

/* The holes of [from, to): with WFD < 0 their size in bytes, else filled,
   through the window W if it has a descriptor and works, else block by
   block; -errno on failure.  */
static int64_t
walk_holes (int rfd, int wfd, struct window *w, int64_t from, int64_t to,
	    int64_t bs)
{
  int64_t bytes = 0;

  while (from < to)
    {
      int64_t h = lseek64 (rfd, from, SEEK_HOLE), d;
      if (h == -1)
	return errno == ENXIO ? bytes : -errno;
      /* tmpfs rounds the end-of-file hole of a file ending near INT64_MAX
	 up to 2^63, which reads as negative: no hole in range either.  */
      if (h < 0 || h >= to)
	break;
      if (wfd >= 0 && w->fd < 0)
	{
	  /* That SEEK_HOLE was the check: the byte at H is in a hole.  The
	     next block is computed from TO - H: H + BS overflows in the last
	     block below INT64_MAX.  */
	  int err = __fa_put_zeros (wfd, h, 1);
	  if (err)
	    return -err;
	  d = to - h > bs - h % bs ? h - h % bs + bs : to;
	}
      else if ((d = lseek64 (rfd, h, SEEK_DATA)) < 0 && errno != ENXIO)
	return -errno;
      if (d < 0 || d > to)
	d = to;
      if (wfd >= 0 && w->fd >= 0 && populate (w, h, d) < 0)
	{
	  int err = fill_blocks (rfd, wfd, h, d, bs, 0);
	  if (err)
	    return -err;
	}
      /* The first hole still there after populating means the advice does
	 nothing here (qemu-user accepts and ignores it): from there on,
	 write the other way.  */
      if (wfd >= 0 && w->fd >= 0 && !w->checked++
	  && lseek64 (rfd, h, SEEK_HOLE) == h)
	{
	  w->fd = -1;
	  continue;
	}
      bytes += d - h;
      from = d;
    }
  return bytes;
}

/* The part past the end of file, in large writes while the size is ours.
   Sets *MADE to the size we made; returns 0 or an error.  */
static int
extend (int rfd, int wfd, int64_t pos, int64_t end, int64_t bs, int blind,
	int64_t *made)
{
  struct stat64 now;

  while (pos < end)
    {
      size_t n = end - pos < CHUNK ? (size_t) (end - pos) : CHUNK;

      if (fstat64 (wfd, &now) < 0)
	return errno;
      if (now.st_size != *made)
	return fill_blocks (rfd, wfd, pos, end, bs, blind);
      /* Each write counted as it lands, so that a failure after a short
	 one truncates what it added.  */
      ssize_t w = pwrite64 (wfd, zeros, n, pos);
      if (w < 0 && errno != EINTR)
	return errno;
      if (w > 0)
	*made = pos += w;
    }
  return 0;
}

/* Past the end of file by appending, for a range that starts inside the
   file: an append lands where the file ends at that moment, so it cannot
   overwrite what a concurrent writer has put there.  A writer extending
   the file between our fstat and our append makes the file end beyond END
   by the zeros we append after its data: nothing of it is lost, and the
   size is no longer ours to truncate on failure (*MADE becomes -1).
   pwrite on an O_APPEND descriptor appends; its offset is where it lands
   alone.  */
static int
append (int afd, int64_t end, int64_t *made)
{
  struct stat64 now;

  while (fstat64 (afd, &now) == 0)
    {
      if (now.st_size >= end)
	return 0;
      size_t n = end - now.st_size < CHUNK ? (size_t) (end - now.st_size) : CHUNK;
      ssize_t w = pwrite64 (afd, zeros, n, now.st_size);
      if (w < 0 && errno != EINTR)
	return errno;
      if (w > 0)
	*made = now.st_size == *made ? now.st_size + w : -1;
    }
  return errno;
}

/* The mapping way past the end of file, for a range that starts past it:
   one zero byte at END - 1, unless the file reaches END already; the rest
   is then a hole to populate.  */
static int
grow (int wfd, int64_t end, int64_t *made)
{
  struct stat64 now;
  int err;

  if (fstat64 (wfd, &now) < 0)
    return errno;
  if (now.st_size >= end)
    return 0;
  err = __fa_put_zeros (wfd, end - 1, 1);
  if (!err)
    *made = end;
  return err;
}

/* Filesystems whose pages go to another machine, by statfs f_type.  */
static int
remote (unsigned long type)
{
  static const unsigned long magic[] = {
    0x6969,			/* NFS */
    0x517b, 0xff534d42, 0xfe534d42,	/* SMB, CIFS, SMB2 */
    0x65735546,			/* FUSE */
    0x00c36400,			/* Ceph */
    0x01021997,			/* 9P */
    0x6b414653, 0x5346414f,	/* kAFS, OpenAFS */
    0x0bd00bd0,			/* Lustre */
    0x20030528,			/* OrangeFS */
    0x73757245,			/* Coda */
  };

  for (size_t i = 0; i < sizeof magic / sizeof magic[0]; i++)
    if ((type & 0xffffffffUL) == magic[i])
      return 1;
  return 0;
}

int
__fa_fill (int fd, int64_t off, int64_t len)
{
  struct stat64 st;
  struct statfs64 fs;
  struct window w = { -1, NULL, 0, 0 };
  int flags, solo, err = __fa_check (fd, 0, off, len, &flags, &st, &solo);
  int rfd, wfd = fd, afd = -1, mfd = -1, blind;
  int64_t end, size0, lim, tail, holes, made, bs = 4096, pos;
  uint64_t room = UINT64_MAX;

  if (err)
    return err;
  end = off + len;
  size0 = made = st.st_size;
  lim = end < size0 ? end : size0;
  tail = end > size0 ? end - (off > size0 ? off : size0) : 0;

  /* The step must not exceed the filesystem's block, or blocks would be
     skipped; 4096 (a page) is glibc's cap too.  */
  if (fstatfs64 (fd, &fs) < 0)
    return errno;
  if (fs.f_bsize >= 512 && fs.f_bsize < 4096)
    bs = (int64_t) fs.f_bsize;
  /* A filesystem that counts no blocks at all (memfd's internal tmpfs,
     a tmpfs mounted without a size) has no free space to check.  The
     blocks reserved for root are not ours to count otherwise.  */
  if (fs.f_blocks > 0)
    room = (uint64_t) (geteuid () == 0 ? fs.f_bfree : fs.f_bavail)
	   * (uint64_t) (fs.f_frsize ? fs.f_frsize : fs.f_bsize);

  rfd = __fa_seeker (fd, &st, solo, &pos);
  blind = off < lim && (uint64_t) lseek64 (rfd, 0, SEEK_HOLE) >= (uint64_t) size0
	  && st.st_blocks * 512 < size0;
  /* The holes within the file, at most all of it; counted (two lseeks a
     hole, as many again as filling them costs) only where the count
     decides: when the upper bound would not fit.  */
  holes = blind ? 0 : lim - off > 0 ? lim - off : 0;
  if (blind && rfd == fd && (flags & O_ACCMODE) != O_RDWR)
    err = EBADF;
  else if (__fa_too_big (rfd, end))
    err = EFBIG;
  else if ((uint64_t) (holes + tail) > room
	   && (holes = walk_holes (rfd, -1, &w, off, lim, bs)) < 0)
    err = (int) -holes;
  else if ((uint64_t) (holes + tail) > room)
    err = ENOSPC;
  else if ((wfd = __fa_writer (fd, flags, &st, solo)) == fd
	   && (flags & O_APPEND))
    {
      /* Appending writes exactly where a pure extension must go, which
	 is all there is to do if the range within the file has no holes.  */
      if (!blind && off <= size0 && holes > 0)
	holes = walk_holes (rfd, -1, &w, off, lim, bs);
      if (holes < 0)
	err = (int) -holes;
      else if (off > size0 || holes != 0 || blind)
	err = EBADF;
    }
  /* The mapping way needs a descriptor open for reading, a kernel that
     knows the advice (an unknown one fails even for length 0), and a
     local filesystem: a network one writes whole dirty pages back, and
     the zeros of a page read at fault time would overwrite what another
     client has since written there.  */
  if (!err && !blind && !remote (fs.f_type)
      && madvise (NULL, 0, MADV_POPULATE_WRITE) == 0)
    w.fd = mfd = (flags & O_ACCMODE) == O_RDWR
		 ? fd : __fa_reopen (fd, O_RDWR, &st, solo);
  /* Appending through the caller's descriptor only if it is the one we
     write through: an O_DIRECT one refuses unaligned appends.  */
  if (!err && end > size0 && off <= size0)
    afd = (flags & O_APPEND) && wfd == fd
	  ? fd : __fa_reopen (fd, O_WRONLY | O_APPEND, &st, solo);
  if (!err && afd >= 0)
    err = append (afd, end, &made);
  else if (!err && w.fd >= 0)
    err = grow (wfd, end, &made);
  else if (!err)
    err = extend (rfd, wfd, off > size0 ? off : size0, end, bs, blind, &made);
  if (!err && blind)
    err = fill_blocks (rfd, wfd, off, lim, bs, 1);
  else if (!err && (holes = walk_holes (rfd, wfd, &w, off, end, bs)) < 0)
    err = (int) -holes;
  if (!err)
    err = __fa_sync (fd, flags);
  if (err && made > size0 && fstat64 (wfd, &st) == 0 && st.st_size == made)
    ftruncate64 (wfd, size0);
  if (w.p != NULL)
    munmap (w.p, WINDOW);
  if (mfd >= 0 && mfd != fd)
    close (mfd);
  if (afd >= 0 && afd != fd)
    close (afd);
  __fa_unseek (fd, rfd, pos);
  if (wfd != fd)
    close (wfd);
  return err;
}
