/* The writing and appending ways of posix_fallocate's fallback
   (fa-fill.c), the mapping way's one byte past the end of file
   (__fa_grow, whose window fa-map.c lists), and the zeros the descriptor
   layer writes (__fa_write_zeros, which the emulation uses too).

   - Writing (where the mapping way does not work: fa-map.c): one zero
     byte per block, each written where, just before, FIEMAP found no
     extent (or one past the end of file) and pread read a zero; past the
     end of file, zeros in 1 MiB writes while the size is still the one
     we made (an fstat before each write tells).
   Through an O_APPEND descriptor of an append-only file, space past the
   end of file is appended, which lands where the file ends at that
   moment.

   Inside the file, holes at or past RLIMIT_FSIZE are allocated by the
   mapping way, as by the kernel; the writing way says EFBIG there
   without writing (its write would raise SIGXFSZ).

   Race windows, exactly (tests/progs/t-race measures them):
   - appending (append-only files): none that loses data; a writer that
     extends the file between our fstat and our append gets our zeros
     after its data, and the file ends up to 1 MiB longer than the
     range; where it left a hole in the range, EBADF (fa-fill.c, run).
   - writing: a writer that fills a hole block between our check and our
     write loses one byte, the one we write (glibc's pread/pwrite probe
     has this window, per block); over FUSE, a round trip to the server
     for each, t-race's writer on ntfs-3g lost that byte in 6 of 75,819
     blocks in one run.  A writer that writes past the end of
     file between our fstat and our next 1 MiB write loses what it wrote
     into that MiB.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fa-fill.h"

/* Not const: .bss costs nothing, .rodata would put a megabyte of zeros in
   the library file.  Never written.  Aligned for O_DIRECT descriptors.  */
static char zeros[FA_CHUNK] __attribute__ ((aligned (4096)));

/* Up to N zeros written at POS through F's descriptor (which must not be
   O_APPEND): the count written in *DONE.  A write that returns 0 (a FUSE
   server may) is EIO, not a reason to try forever.  */
int
__fa_write_zeros (struct fa_file *f, int64_t pos, size_t n, size_t *done)
{
  *done = 0;
  while (n > 0)
    {
      ssize_t w = pwrite64 (f->fd, zeros, n < FA_CHUNK ? n : FA_CHUNK, pos);
      if (w < 0 && errno != EINTR)
	return errno;
      if (w == 0)
	return EIO;
      if (w > 0)
	{
	  pos += w;
	  n -= (size_t) w;
	  *done += (size_t) w;
	  f->wrote = 1;
	}
    }
  return 0;
}

/* RLIMIT_FSIZE, asked once per call, INT64_MAX if none.  */
int64_t
__fa_limit (struct fill *fl)
{
  struct rlimit64 r;

  if (fl->fsize < 0)
    fl->fsize = getrlimit64 (RLIMIT_FSIZE, &r) == 0
		&& r.rlim_cur < (rlim64_t) INT64_MAX ? (int64_t) r.rlim_cur
		: INT64_MAX;
  return fl->fsize;
}

/* Allocate each block of [from, to) that is a hole right now, by writing
   one zero byte: the last byte of the block within the range.  A write
   at or past RLIMIT_FSIZE raises SIGXFSZ, which kills, even inside the
   file, where the kernel's fallocate allocates whatever the limit: we
   say EFBIG instead (the mapping way has no limit there).  */
static int
fill_blocks (struct fill *fl, int64_t from, int64_t to)
{
  /* Steps computed from TO - B: B + BS overflows in the last block
     below INT64_MAX.  */
  for (int64_t b = from - from % fl->bs; b < to;
       b += to - b > fl->bs ? fl->bs : to - b)
    {
      int64_t last = (to - b > fl->bs ? b + fl->bs : to) - 1;
      int hole = __fa_in_hole (&fl->f, last), err;
      size_t done;

      if (hole < 0)
	return errno;
      if (hole && last >= __fa_limit (fl))
	return EFBIG;
      if (hole && (err = __fa_write_zeros (&fl->f, last, 1, &done)))
	return err;
    }
  return 0;
}

/* Whether fill_blocks can work through FL's descriptor: not if it
   appends whatever the offset (O_APPEND), refuses one-byte writes
   (O_DIRECT), or can neither read nor find holes.  */
int
__fa_writable (struct fill *fl)
{
  return !(fl->f.flags & (O_APPEND | O_DIRECT))
	 && ((fl->f.flags & O_ACCMODE) == O_RDWR
	     || __fa_holes_known (&fl->f));
}

struct blocks
{
  struct fill *fl;
  int64_t from, to;
};

/* Where even our descriptor cannot write there (an append-only file
   opens for writing only O_APPEND), EBADF, unless it finds no hole to
   fill (on tmpfs by lseek, which the caller's could not do without
   moving its offset).  */
static int
own_blocks (void *arg)
{
  struct blocks *b = arg;
  int64_t n = 0;

  if (!__fa_writable (b->fl))
    return __fa_holes_known (&b->fl->f)
	   && __fa_holes (b->fl, b->from, b->to, &n) == 0 && n == 0
	   ? 0 : EBADF;
  return fill_blocks (b->fl, b->from, b->to);
}

/* fill_blocks, through a descriptor of our own where the caller's would
   append (O_APPEND) or refuse one-byte writes (O_DIRECT).  */
int
__fa_write_blocks (struct fill *fl, int64_t from, int64_t to)
{
  struct blocks b = { fl, from, to };

  if (!__fa_writable (fl))
    return __fa_own (&fl->f, own_blocks, &b);
  return fill_blocks (fl, from, to);
}

/* The part past the end of file through an O_APPEND descriptor that no
   descriptor of our own can replace (an append-only file: chattr +a),
   which appends whatever offset it is given: the file grows to END
   where it ends at that moment, so nothing a concurrent writer put
   there can be overwritten.  A writer extending the file between our
   fstat and our append makes the file end beyond END by the zeros we
   append after its data (two such calls at once, up to 1 MiB): nothing
   of it is lost, and the size is no longer ours to truncate on failure
   (made becomes -1).  A file that does not grow by what we append (a
   FUSE server that drops writes) is EIO, not a reason to go on.  A
   range that starts past the end of file is EBADF, before any write
   (through any O_APPEND descriptor no descriptor of ours replaced):
   appends would allocate the space between, outside the range (the
   kernel leaves a hole there), and the free space counted for the
   range (fa-plan.c) does not cover it; on failure an append-only file
   cannot be cut back.  It is the answer to a hole inside such a file
   (doc/FALLBACK), which the gap becomes.  */
int
__fa_append (struct fill *fl)
{
  struct stat64 now;
  int64_t want = fl->size0;

  while (fstat64 (fl->f.fd, &now) == 0)
    {
      if (now.st_size >= fl->end)
	return 0;
      if (now.st_size < want)
	return EIO;
      if (now.st_size < fl->off)
	return EBADF;
      size_t n = fl->end - now.st_size < FA_CHUNK
		 ? (size_t) (fl->end - now.st_size) : FA_CHUNK, done;
      int err = __fa_write_zeros (&fl->f, now.st_size, n, &done);

      if (done > 0)
	fl->made = now.st_size == fl->made ? now.st_size + (int64_t) done : -1;
      if (err)
	return err;
      want = now.st_size + (int64_t) done;
    }
  return errno;
}

/* The part past the end of file from POS, in large writes while the size
   is ours; if someone else changes it, block by block as holes.  */
int
__fa_extend (struct fill *fl, int64_t pos)
{
  struct stat64 now;

  while (pos < fl->end)
    {
      size_t n = fl->end - pos < FA_CHUNK ? (size_t) (fl->end - pos)
		 : FA_CHUNK, done;
      int err;

      if (fstat64 (fl->f.fd, &now) < 0)
	return errno;
      if (now.st_size != fl->made)
	return __fa_write_blocks (fl, pos, fl->end);
      /* Each write counted as it lands, so that a failure after a short
	 one truncates what it added.  */
      err = __fa_write_zeros (&fl->f, pos, n, &done);
      if (done > 0)
	fl->made = pos += (int64_t) done;
      if (err)
	return err;
    }
  return 0;
}

/* The mapping way past the end of file: one zero byte at END - 1, unless
   the file reaches END already (by the fstat of the check, or the one
   under the lock: a few system calls ago); the rest is then a hole to
   populate.  */
int
__fa_grow (struct fill *fl)
{
  size_t done;
  int err;

  if (fl->size0 >= fl->end)
    return 0;
  err = __fa_write_zeros (&fl->f, fl->end - 1, 1, &done);
  if (!err)
    fl->made = fl->end;
  return err;
}
