/* Allocation without the system call, for filesystems (EOPNOTSUPP) and
   kernels or sandboxes (ENOSYS) where fallocate cannot allocate.

   Guarantee: no byte that holds data is changed, except in the windows
   listed below; the caller's file offset never moves, and no record lock
   or lease of the process is dropped (fa-file.c says how).

   Calls of ours on the same file take turns (fa-file.c), so two threads
   allocating the same range leave it exactly as one would; two
   processes too, as far as the size goes: past the end of file we write
   at exact offsets, never append (but to an append-only file).

   Holes are found with FIEMAP where the filesystem has it; elsewhere
   (tmpfs, FUSE, network filesystems) every block of the range is a
   candidate, unless the filesystem cannot have holes (solid, below).
   After the writes, the file must reach the range's end, or EIO: a
   FUSE server may accept writes and drop them.
   They are allocated two ways:
   - Mapping (Linux 5.14 and later, a local filesystem, an O_RDWR
     descriptor): the pages of each hole are faulted in for writing
     through a shared mapping (madvise MADV_POPULATE_WRITE), 64 MiB
     windows kept across holes.  The filesystem allocates them as for a
     write, and no byte is written through the page cache.  A range past
     the end of file first gets one zero byte at its end, which makes the
     rest a hole; its whole huge pages are advised MADV_HUGEPAGE (huge
     folios, one fault each: advise_huge).  A fault allocates the whole
     folio of its page, so within folio_max (8 MiB with 4 KiB pages) of
     the range's ends the clean page cache is dropped and faults make
     one-page folios, before all others (edges, ends_first); and where
     blocks are smaller than a page, the range's part of a page that
     reaches past an end takes the writing way (fill_hole).  Whether the advice allocates is checked
     at the first hole: where it allocates only once the pages are
     written back (the ext2 driver's page_mkwrite reserves nothing),
     they are written back (msync) before we return; where it does
     nothing (qemu-user accepts it and ignores it), the writing way.
   - Writing (elsewhere): one zero byte per block, each written where,
     just before, FIEMAP found no extent (or one past the end of file)
     and pread read a zero; past the end of file, zeros in 1 MiB writes
     while the size is still the one we made (an fstat before each write
     tells).
   Through an O_APPEND descriptor of an append-only file, space past the
   end of file is appended, which lands where the file ends at that
   moment.

   Race windows, exactly (tests/progs/t-race measures them):
   - appending (append-only files): none that loses data; a writer that
     extends the file between our fstat and our append gets our zeros
     after its data, and the file ends up to 1 MiB longer than the
     range.
   - mapping, past the end of file: a writer that writes the last byte of
     the range between our fstat and our one-byte write there loses it.
   - mapping, O_DIRECT writers: a page we fault in is read before an
     O_DIRECT write into the same hole reaches the disk and written back
     after it (the kernel logs "Page cache invalidation failure on direct
     I/O"), so that write is lost.  Measured (an O_DIRECT writer filling
     a sparse 32 MiB file in random order during posix_fallocate, ext4,
     30 runs each): 8 runs lost a block (9 blocks), glibc's fallback 21
     runs (54 blocks), the kernel's fallocate none.  Starting writeback
     right after each populate changed nothing measurable, and nothing
     else in user space closes the window.
   - writing: a writer that fills a hole block between our check and our
     write loses one byte, the one we write (glibc's pread/pwrite probe
     has this window, per block); over FUSE, a round trip to the server
     for each, t-race's writer on ntfs-3g lost that byte in 6 of 75,819
     blocks in one run.  A writer that writes past the end of
     file between our fstat and our next 1 MiB write loses what it wrote
     into that MiB.
   - failure: a writer that writes into the zeros we added, without
     extending the file further, loses that when the truncation undoes our
     extension (one that extends it further keeps the size: we truncate
     only a size that is still ours).
   - truncation by another process during the call (the kernel's
     fallocate holds the inode's lock against it): for a call larger than
     1 MiB where FIEMAP finds holes, the range is looked at again after
     the fill and filled again, twice at most, then EIO; elsewhere (tmpfs,
     FUSE, network filesystems, smaller calls) 0 may come back with a
     hole the truncation made, as from glibc's fallback.

   What the caller's descriptor cannot write, a descriptor of our own
   writes: opened through /proc by a thread of ours whose descriptor
   table is its own (fa-file.c), so that closing it drops none of the
   process's record locks.  That is needed for holes inside the file
   through an O_WRONLY descriptor (it can neither be mapped nor read),
   the writing way through an O_APPEND or O_DIRECT one (the first
   appends whatever the offset, the second refuses one-byte writes),
   space past the end of file through an O_APPEND or O_DIRECT one, and
   past 2 GiB through a 32-bit program's descriptor without O_LARGEFILE.
   Not while a lease is held on the caller's open file (opening would
   break it), by whichever process, nor without /proc: then EBADF.

   Past RLIMIT_FSIZE: SIGXFSZ and EFBIG before any write, as from the
   kernel.  Inside the file, holes at or past the limit are allocated by
   the mapping way, as by the kernel; the writing way says EFBIG there
   without writing (its write would raise SIGXFSZ).

   Failure part way (ENOSPC, EIO, EFBIG): the size we added is truncated
   away again, unless someone else has extended the file further; blocks
   filled inside holes stay allocated and read as zeros, as before.  A
   request larger than the free space fails with ENOSPC before any write,
   but one of at most 1 MiB, all past the end of file, may instead meet
   it in its one write (fa-file.c, statfs_of), undone as any failure.

   A memfd sealed against writes (F_SEAL_WRITE) gets 0 within its size
   and its size grown past it, as from the kernel: no write to it can ever
   fail for lack of space.  One sealed with F_SEAL_FUTURE_WRITE, which a
   writable mapping made before can still write, gets EPERM: neither our
   writes nor a mapping of ours may allocate there (the kernel does).  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <fallocate.h>
#include "fa-file.h"

/* O_LARGEFILE as the kernel sets it and F_GETFL reports it.  x86_64's
   C library calls it 0 (the kernel sets it on every descriptor a 64-bit
   program opens), but fallocate-supervise, an x86_64 program, also
   answers i386 programs, whose descriptors may lack it: the kernel's
   value, i386's and x86_64's alike.  */
#ifdef __x86_64__
# define FA_O_LARGEFILE 0100000
#else
# define FA_O_LARGEFILE O_LARGEFILE
#endif

/* Linux 5.14's advice; a C library older than that (musl 1.2.3) does not
   define it.  The same number on every ABI (asm-generic/mman-common.h;
   alpha, mips, parisc and xtensa repeat it).  */
#ifndef MADV_POPULATE_WRITE
# define MADV_POPULATE_WRITE 23
#endif

#define WINDOW (64 << 20)	/* mapped at a time */

/* Whether the kernel knows MADV_POPULATE_WRITE (an unknown advice fails
   even for length 0); asked once.  */
static int
can_populate (void)
{
  static int known;		/* 0 not asked, 1 yes, -1 no */

  if (known == 0)
    known = madvise (NULL, 0, MADV_POPULATE_WRITE) == 0 ? 1 : -1;
  return known > 0;
}

/* One call's state.  */
struct fill
{
  struct fa_file f;
  int64_t off, end;
  int64_t size0;		/* the size before */
  int64_t made;			/* the size we made, or -1 if not ours */
  int64_t bs;			/* step of the writing way */
  int64_t fsize;		/* RLIMIT_FSIZE, or -1 not asked yet */
  int map;			/* the mapping way, while it works */
  int checked;			/* that populating allocates */
  int writeback;		/* only once written back (ext2) */
  char *p;			/* the window mapped, at, len bytes */
  int64_t at;
  size_t len;
  int64_t lo, hi;		/* populated since the last flush */
  int wberr;			/* the first flush's error */
  int edged;			/* which ends edges has seen to: 1, 2 */
};

/* MADV_POPULATE_WRITE over [P, P + N) of the window; on tmpfs, whose
   pages are its storage, only over the pages not in memory, which are
   all that can be holes (a page swapped out is allocated too, but not in
   memory: faulted in again, it costs time only).  Over 256 MiB of data,
   faulting each page in cost a fifth of glibc's one-byte reads.  */
static int
advise (struct fill *fl, char *p, size_t n)
{
  size_t page = (size_t) sysconf (_SC_PAGESIZE), i, j;
  unsigned char vec[1024];	/* 4 MiB a step: a handler's stack */

  if (fl->f.fs.f_type != FA_TMPFS)
    return madvise (p, n, MADV_POPULATE_WRITE);
  for (size_t at = 0; at < n; at += sizeof vec * page)
    {
      size_t len = n - at < sizeof vec * page ? n - at : sizeof vec * page;
      size_t pages = (len + page - 1) / page;

      if (mincore (p + at, len, vec) < 0)
	memset (vec, 0, pages);
      for (i = 0; i < pages; i = j)
	{
	  while (i < pages && (vec[i] & 1))
	    i++;
	  for (j = i; j < pages && !(vec[j] & 1); j++)
	    ;
	  if (j > i && madvise (p + at + i * page, (j - i) * page,
				MADV_POPULATE_WRITE) < 0)
	    return -1;
	}
    }
  return 0;
}

/* Where the advice allocates only at writeback (ext2), the pages
   populated since the last flush written back: one msync over them all
   per window, not one per hole, each of which waits for the disk and the
   inode (2,048 holes of a block: 2.3 s against glibc's 0.28 s, ext2 in
   make check-kernel's VM).  0, or -1 with the error (ENOSPC among
   them) kept in FL->wberr too: msync reports it once, and holes flushed
   before are not those populate goes on to, so the call must fail.  */
static int
flush (struct fill *fl)
{
  int r = 0;

  if (fl->hi > fl->lo)
    r = msync (fl->p + (fl->lo - fl->at), (size_t) (fl->hi - fl->lo),
	       MS_SYNC);
  if (r < 0 && !fl->wberr)
    fl->wberr = errno;
  fl->lo = fl->hi = 0;
  return r;
}

/* A multiple of the largest folio the page cache makes: 2048 pages
   (Linux 6.10 caps its folios there, MAX_XAS_ORDER; x86_64's largest is
   2 MiB, a huge page).  A fault marks the whole folio of its page for
   writeback (page_mkwrite), which allocates all of it, and readahead
   makes folios that reach around and before the page faulted: a 4 KiB
   call allocated 1 MiB on ext4, xfs and ext2 (Linux 6.18), and an
   O_DIRECT writer just past a range lost blocks to those pages written
   back (an outside review).  */
static int64_t
folio_max (void)
{
  return (int64_t) sysconf (_SC_PAGESIZE) * 2048;
}

/* X rounded up to a multiple of M, or past it by M: INT64_MAX at most
   (a range may end there).  */
static int64_t
up (int64_t x, int64_t m)
{
  return x > INT64_MAX - m ? INT64_MAX : x - x % m + m;
}

/* Within folio_max of the range's ends, where the file goes on past
   them, no fault of ours may find or make a folio that reaches outside
   the range.  Before anything else in that block of the file: its page
   cache is dropped where clean if the page at the end is in memory
   (POSIX_FADV_DONTNEED; nothing in it that is not on the disk), the
   window there is read without readahead (MADV_RANDOM, map_window),
   and the holes of the range there are faulted in, each
   into a folio of one page; later readahead from inside the range then
   stops at them.  What cannot be dropped (dirty, or mapped by someone)
   stays, and a large folio of it is allocated whole.  Writing the ends
   instead, block by block, lost a concurrent writer's byte, said EFBIG
   past RLIMIT_FSIZE and needed a descriptor of our own through O_DIRECT
   (an outside review of that fix).  0, or -1 as populate.  */
static int advise (struct fill *fl, char *p, size_t n);
static int map_window (struct fill *fl, int64_t at);

/* The range's start (I 0) or end (I 1) where the file goes on past it
   and it is not a multiple of folio_max, else -1.  */
static int64_t
edge (const struct fill *fl, int i)
{
  int64_t size = fl->made > fl->size0 ? fl->made : fl->size0;
  int64_t e = i == 0 ? fl->off : fl->end < size ? fl->end : 0;

  return e % folio_max () ? e : -1;
}

static int
edges (struct fill *fl, int64_t from, int64_t to)
{
  int64_t m = folio_max (), page = sysconf (_SC_PAGESIZE);
  int64_t e[2] = { edge (fl, 0), edge (fl, 1) };

  for (int i = 0; i < 2; i++)
    {
      int64_t a = e[i] - e[i] % m, b = up (a, m);
      int64_t lo = a > from ? a : from, hi = b < to ? b : to;

      if (e[i] < 0 || (fl->edged & (1 << i)) || lo >= hi)
	continue;
      fl->edged |= 1 << i;
      /* Both ends in one block: the first does all of it.  */
      if (i == 0 && e[1] >= 0 && e[1] - e[1] % m == a)
	fl->edged |= 2;
      if (map_window (fl, a - a % WINDOW) < 0)
	return -1;
      /* A folio that reaches across an end holds the page at that end:
	 only then is the cache dropped (4,096 calls of 4 KiB in a row,
	 each dropping its block, took 10 times glibc's time), and all of
	 the block, as a folio is dropped only whole.  */
      for (int k = i; k < 2; k++)
	{
	  int64_t pg = (k ? e[k] - 1 : e[k]) / page * page;
	  unsigned char in = 0;

	  if (e[k] >= 0 && e[k] - e[k] % m == a && pg >= fl->at
	      && pg < fl->at + (int64_t) fl->len
	      && mincore (fl->p + (pg - fl->at), (size_t) page, &in) == 0
	      && (in & 1))
	    {
	      posix_fadvise64 (fl->f.fd, a, m, POSIX_FADV_DONTNEED);
	      break;
	    }
	}
      lo -= lo % page;
      if (advise (fl, fl->p + (lo - fl->at), (size_t) (hi - lo)) < 0)
	return -1;
    }
  return 0;
}

/* New space (past the old end of file and from the range's start on)
   of the window just mapped, in whole folio_max steps, marked
   MADV_HUGEPAGE: there the page cache reads huge folios in (a hole's:
   zeros) and one fault maps each, which took 256 MiB of new space on
   ext4 (Linux 6.18) from 1.3 to 1.1-1.2 times the time of writing as
   many zeros.  Only there: such a folio starts at a huge page's
   boundary, and would allocate holes outside the range (folio_max).
   Only a hint, which may fail (no THP).  */
static void
advise_huge (struct fill *fl)
{
  int64_t huge = folio_max ();
  int64_t lo = fl->size0 > fl->off ? fl->size0 : fl->off;
  int64_t hi = fl->at + (int64_t) fl->len < fl->end
	       ? fl->at + (int64_t) fl->len : fl->end;

  lo = lo > fl->at ? lo : fl->at;
  lo = lo % huge ? up (lo, huge) : lo;
  hi -= hi % huge;
  if (hi > lo)
    madvise (fl->p + (lo - fl->at), (size_t) (hi - lo), MADV_HUGEPAGE);
}

/* The window from AT (a multiple of WINDOW) mapped, if it is not: no more
   of it than the range reaches (unmapping 64 MiB cost a 4 KiB call on
   tmpfs 30 us).  0, or -1.  */
static int
map_window (struct fill *fl, int64_t at)
{
  int64_t page = sysconf (_SC_PAGESIZE);
  int64_t need = (fl->end - at + page - 1) / page * page;
  size_t len = (size_t) (need < WINDOW ? need : WINDOW);

  if (fl->p != NULL && fl->at == at)
    return 0;
  if (fl->p != NULL && (flush (fl) < 0 || munmap (fl->p, fl->len)))
    return -1;
  fl->p = mmap64 (NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fl->f.fd,
		  at);
  if (fl->p == MAP_FAILED)
    {
      fl->p = NULL;
      return -1;
    }
  fl->at = at;
  fl->len = len;
  advise_huge (fl);
  /* Each time the window is mapped: a hole near an end may come after
     another window (an outside review: 12 KiB past the end of a range
     across 64 MiB).  */
  for (int i = 0; i < 2; i++)
    {
      int64_t m = folio_max (), e = edge (fl, i);
      int64_t a = e - e % m, b = up (a, m);

      a = a > at ? a : at;
      b = b < at + (int64_t) len ? b : at + (int64_t) len;
      if (e >= 0 && a < b)
	madvise (fl->p + (a - at), (size_t) (b - a), MADV_RANDOM);
    }
  return 0;
}

/* Allocate the pages of [from, to), which lie inside the file, without
   writing a byte (where only writeback allocates, at the next flush):
   0, or -1 if that cannot be done (an error of the filesystem, ENOSPC
   among them, shows as a failed fault: EFAULT).  */
static int
populate (struct fill *fl, int64_t from, int64_t to)
{
  if (edges (fl, from, to) < 0)
    return -1;
  from -= from % sysconf (_SC_PAGESIZE);
  while (from < to)
    {
      int64_t at = from - from % WINDOW;
      int64_t n = (to - at < WINDOW ? to : at + WINDOW) - from;

      if (map_window (fl, at) < 0)
	return -1;
      if (advise (fl, fl->p + (from - at), (size_t) n) < 0)
	return -1;
      if (fl->writeback)
	{
	  fl->lo = fl->hi > fl->lo ? fl->lo : from;
	  fl->hi = from + n;
	}
      fl->f.wrote = 1;
      from += n;
    }
  return 0;
}

/* RLIMIT_FSIZE, asked once per call, INT64_MAX if none.  */
static int64_t
limit (struct fill *fl)
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
      if (hole && last >= limit (fl))
	return EFBIG;
      if (hole && (err = __fa_write_zeros (&fl->f, last, 1, &done)))
	return err;
    }
  return 0;
}

/* Whether fill_blocks can work through FL's descriptor: not if it
   appends whatever the offset (O_APPEND), refuses one-byte writes
   (O_DIRECT), or can neither read nor find holes.  */
static int
writable (struct fill *fl)
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

static int
own_blocks (void *arg)
{
  struct blocks *b = arg;

  if (!writable (b->fl))
    return EBADF;
  return fill_blocks (b->fl, b->from, b->to);
}

/* fill_blocks, through a descriptor of our own where the caller's would
   append (O_APPEND) or refuse one-byte writes (O_DIRECT).  */
static int
write_blocks (struct fill *fl, int64_t from, int64_t to)
{
  struct blocks b = { fl, from, to };

  if (!writable (fl))
    return __fa_own (&fl->f, own_blocks, &b);
  return fill_blocks (fl, from, to);
}

/* Whether holes can be found in the file (fa-file.c).  */
static int
known (struct fill *fl)
{
  return __fa_holes_known (&fl->f);
}

/* Whether the fuseblk filesystem of F is exFAT, by its device's boot
   sector, the device named by /proc/self/mountinfo: 0 if so.  In
   __fa_aside's thread, so that opening and closing them drops no record
   lock the process holds on the device.  */
static int
exfat_device (void *arg)
{
  const struct fa_file *f = arg;
  char line[4096], dev[32], src[4096], sig[8];
  struct stat64 st;
  int found = 0;

  FILE *m = fopen ("/proc/self/mountinfo", "re");
  if (m == NULL)
    return 1;
  snprintf (dev, sizeof dev, " %u:%u ", major (f->st.st_dev),
	    minor (f->st.st_dev));
  while (!found && fgets (line, sizeof line, m))
    {
      char *p = strstr (line, dev), *q = strstr (line, " - fuseblk ");
      found = p && q && p < q && sscanf (q + 11, "%4095s", src) == 1;
    }
  fclose (m);
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

/* The last FUSE mount solid asked about (fa-file.c's
   __fa_mount_answer): a mount's device is its own for life, and asking
   (a thread, /proc/self/mountinfo read) cost a FUSE call 50 us or more.  */
static uint64_t solid_mount;

/* Where holes cannot be found: whether the filesystem cannot hold any
   (st_blocks cannot tell: tmpfs and xfs count blocks kept past the end
   of file, and a file may have those and holes both).  FAT and exFAT
   store every byte up to the size, by the kernel's drivers; exfat-fuse
   (fuseblk) is told by its device's boot sector, where the process can
   read the device (root, the disk group).  */
static int
solid (struct fill *fl)
{
  unsigned long type = fl->f.fs.f_type & 0xffffffffUL;
  int s;

  if (type == 0x2011bab0 || type == 0x4d44)
    return 1;
  if (type != 0x65735546)
    return 0;
  if ((s = __fa_mount_answer (&solid_mount, fl->f.mnt)) < 0)
    {
      s = __fa_aside (exfat_device, &fl->f) == 0;
      __fa_mount_keep (&solid_mount, fl->f.mnt, s);
    }
  return s;
}

/* Whether the pages of the window last populated, within [from, to),
   are all in memory: on tmpfs, whose pages are its storage, that they
   are allocated.  */
static int
resident (struct fill *fl, int64_t from, int64_t to)
{
  long page = sysconf (_SC_PAGESIZE);
  int64_t a = from > fl->at ? from : fl->at;
  int64_t b = to < fl->at + (int64_t) fl->len ? to : fl->at + (int64_t) fl->len;
  unsigned char vec[256];

  for (a -= a % page; a < b; a += (int64_t) sizeof vec * page)
    {
      size_t n = (size_t) ((b - a + page - 1) / page);
      n = n < sizeof vec ? n : sizeof vec;
      if (mincore (fl->p + (a - fl->at), n * (size_t) page, vec) < 0)
	return 0;
      for (size_t i = 0; i < n; i++)
	if (!(vec[i] & 1))
	  return 0;
    }
  return 1;
}

/* Whether the hole [from, to) is allocated now: it is no longer found
   there, or, where holes cannot be found, st_blocks grew from BLOCKS, or
   on tmpfs the pages are in memory (a range already allocated does not
   grow st_blocks, and writing it instead would race with its writers:
   a review lost blocks so).  */
static int
gone (struct fill *fl, int64_t from, int64_t to, int64_t blocks)
{
  struct stat64 now;
  int64_t h = from, d = to;
  int found;

  __fa_forget (&fl->f);
  found = __fa_next_hole (&fl->f, &h, &d);
  if (found >= 0)
    return found == 0 || h != from;
  return (fstat64 (fl->f.fd, &now) == 0 && now.st_blocks > blocks)
	 || (fl->f.fs.f_type == FA_TMPFS && fl->p && resident (fl, from, to));
}

/* The hole [from, to), inside the file, allocated.  Where holes cannot
   be found, the first populate is judged by st_blocks: BLOCKS, counted
   just before (-1 elsewhere).  */
static int
fill_hole (struct fill *fl, int64_t from, int64_t to, int64_t blocks)
{
  int64_t page = sysconf (_SC_PAGESIZE);

  /* A fault allocates all of its page: where blocks are smaller (1 KiB
     blocks of ext2 or xfs), the range's part of a page at its start or
     end that reaches outside it is written block by block (an outside
     review: 2 KiB at 5 KiB allocated 4 KiB, and an O_DIRECT writer of
     the block past it lost its write).  */
  if (fl->map && fl->bs < page)
    {
      int64_t size = fl->made > fl->size0 ? fl->made : fl->size0, err;
      int64_t lo = fl->off % page ? up (fl->off, page) : fl->off;
      int64_t hi = fl->end < size ? fl->end - fl->end % page : fl->end;

      if (lo >= hi || to <= lo || from >= hi)
	return write_blocks (fl, from, to);
      if (from < lo && (err = write_blocks (fl, from, lo)))
	return (int) err;
      if (to > hi && (err = write_blocks (fl, hi, to)))
	return (int) err;
      from = from > lo ? from : lo;
      to = to < hi ? to : hi;
    }
  if (fl->map && populate (fl, from, to) == 0)
    {
      if (fl->checked++)
	return 0;
      /* The first hole tells whether the advice allocates.  */
      if (gone (fl, from, to, blocks))
	return 0;
      /* ext2's page_mkwrite reserves nothing: its blocks come at
	 writeback, which must then happen before we return.  */
      fl->writeback = 1;
      if (populate (fl, from, to) == 0 && flush (fl) == 0
	  && gone (fl, from, to, blocks))
	return 0;
      fl->writeback = 0;
    }
  fl->map = 0;
  return write_blocks (fl, from, to);
}

/* The holes of [from, to) allocated; with COUNT, only their bytes added
   to *COUNT.  Where holes cannot be found the whole range is one
   candidate.  */
static int
holes (struct fill *fl, int64_t from, int64_t to, int64_t *count)
{
  while (from < to)
    {
      int64_t h = from, d = to, blocks = -1, err;
      int found = __fa_next_hole (&fl->f, &h, &d);
      struct stat64 st;

      if (found < 0 && known (fl))
	return errno;
      /* A filesystem without holes: writing into a file's blocks would
	 allocate nothing, and only race with its writers (exfat-fuse:
	 t-race lost a byte per 10,000 blocks).  */
      if (found == 0 || (found < 0 && solid (fl)))
	break;
      if (found < 0 && fstat64 (fl->f.fd, &st) == 0)
	blocks = st.st_blocks;
      if (count)
	*count += d - h;
      else if ((err = fill_hole (fl, h, d, blocks)))
	return (int) err;
      from = d;
    }
  return 0;
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
   FUSE server that drops writes) is EIO, not a reason to go on.  */
static int
append (struct fill *fl)
{
  struct stat64 now;
  int64_t want = fl->size0;

  while (fstat64 (fl->f.fd, &now) == 0)
    {
      if (now.st_size >= fl->end)
	return 0;
      if (now.st_size < want)
	return EIO;
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
static int
extend (struct fill *fl, int64_t pos)
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
	return write_blocks (fl, pos, fl->end);
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
static int
grow (struct fill *fl)
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

/* The bytes in holes of [FL->off, LIM), into N; where they cannot be
   found, all of them.  */
struct count
{
  struct fill *fl;
  int64_t lim, n;
};

static int
count_holes (void *arg)
{
  struct count *c = arg;

  c->n = 0;
  return holes (c->fl, c->fl->off, c->lim, &c->n);
}

/* Past RLIMIT_FSIZE, as the kernel says it: SIGXFSZ and EFBIG (but
   ETXTBSY for an active swap file, which the kernel checks first).  */
static int
too_large (struct fill *fl)
{
  if (__fa_busy (&fl->f, EFBIG) == ETXTBSY)
    return ETXTBSY;
  raise (SIGXFSZ);
  return EFBIG;
}

/* Whether FL's descriptor can take the mapping way (the top of this file).  */
static int
mappable (const struct fill *fl)
{
  return !__fa_remote (fl->f.fs.f_type)
	 && (fl->f.flags & O_ACCMODE) == O_RDWR && can_populate ();
}

/* How to go about it, before anything is written: the step, which ways
   work, EFBIG, and ENOSPC if the holes and the new space would not fit.  */
static int
plan (struct fill *fl)
{
  struct fa_file *f = &fl->f;
  int64_t lim = fl->end < fl->size0 ? fl->end : fl->size0;
  int64_t from = fl->off > fl->size0 ? fl->off : fl->size0;
  int64_t tail = fl->end > from ? fl->end - from : 0;
  int64_t inside = lim > fl->off ? lim - fl->off : 0;
  uint64_t room = UINT64_MAX;
  int err;

  /* The step must not exceed the filesystem's block, or blocks would be
     skipped; 4096 (a page) is glibc's cap too.  */
  fl->bs = 4096;
  if (f->fs.f_bsize >= 512 && f->fs.f_bsize < 4096)
    fl->bs = (int64_t) f->fs.f_bsize;
  if ((err = __fa_too_big (&fl->f, fl->end)))
    return err;
  fl->map = mappable (fl);
  /* Past RLIMIT_FSIZE the kernel sends SIGXFSZ and says EFBIG before it
     changes anything; our writes would get there only after growing the
     file to the limit, and SIGXFSZ kills, so no undo would run (nor can
     one on an append-only file).  grow's one write is the kernel's check
     itself; an O_APPEND descriptor's way is not known yet.  */
  if (fl->end > fl->size0 && (!fl->map || (f->flags & O_APPEND))
      && fl->end > limit (fl))
    return too_large (fl);
  /* A filesystem that counts no blocks at all (memfd's internal tmpfs,
     a tmpfs mounted without a size) has no free space to check.  The
     blocks reserved for root are not ours to count otherwise.  */
  if (f->fs.f_blocks > 0)
    room = (uint64_t) f->fs.f_bavail
	   * (uint64_t) (f->fs.f_frsize ? f->fs.f_frsize : f->fs.f_bsize);
  if ((uint64_t) (inside + tail) > room && geteuid () == 0)
    room = (uint64_t) f->fs.f_bfree
	   * (uint64_t) (f->fs.f_frsize ? f->fs.f_frsize : f->fs.f_bsize);
  /* The holes inside the file, at most all of the range there; counted
     only where the count decides: by FIEMAP, on tmpfs by lseek on a
     descriptor of our own (else a file of data near a full tmpfs got
     ENOSPC), and elsewhere all of it counts (st_blocks cannot bound
     them: see solid).  */
  if ((uint64_t) (inside + tail) > room
      && (known (fl) || f->fs.f_type == FA_TMPFS))
    {
      struct count c = { fl, lim, 0 };

      if (known (fl))
	{
	  if ((err = count_holes (&c)))
	    return err;
	  inside = c.n;
	}
      else if (__fa_own (f, count_holes, &c) == 0)
	inside = c.n;
    }
  /* Before ENOSPC, the limit that grow's write would have met first.  */
  if ((uint64_t) (inside + tail) > room)
    return fl->end > fl->size0 && fl->end > limit (fl) ? too_large (fl)
	   : ENOSPC;
  return 0;
}

/* Whether the caller's descriptor cannot do what this call needs, and
   one of our own must (see the top of this file).  */
static int
needs_own (struct fill *fl)
{
  const struct fa_file *f = &fl->f;
  int64_t lim = fl->end < fl->size0 ? fl->end : fl->size0, n = 0;
  int past = fl->end > fl->size0;

  if ((f->flags & O_DIRECT) && past)
    return 1;
  if (!(f->flags & FA_O_LARGEFILE) && fl->end > INT32_MAX)
    return 1;
  /* An append lands wherever the file ends by then: two processes
     appending at once would each add their part.  Past the end of file
     we write at exact offsets, as through any other descriptor.  */
  if ((f->flags & O_APPEND) && past)
    return 1;
  if (fl->map || lim <= fl->off
      || !((f->flags & O_APPEND) || (f->flags & O_ACCMODE) != O_RDWR))
    return 0;
  /* Holes inside the file, which an append cannot reach, and which an
     O_WRONLY descriptor cannot map: ours can, race-free.  */
  return !known (fl) || holes (fl, fl->off, lim, &n) || n > 0;
}

/* The holes of [FL->off, LIM) within folio_max of its ends allocated
   before the rest (edges): else readahead from faults inside the range
   reads folios in near an end, across it, before the holes there are
   faulted (an outside review: 60 KiB past the end on ext4).  */
static int
ends_first (struct fill *fl, int64_t lim)
{
  int64_t m = folio_max ();

  for (int i = 0; i < 2; i++)
    {
      int64_t e = edge (fl, i), a = e - e % m;
      int64_t lo = a > fl->off ? a : fl->off, hi = up (a, m);
      int err;

      hi = hi < lim ? hi : lim;
      if (e >= 0 && lo < hi && (err = holes (fl, lo, hi, NULL)))
	return err;
    }
  return 0;
}

/* FL's range allocated through FL's descriptor.  */
static int
run (struct fill *fl)
{
  struct stat64 now;
  int64_t lim;
  int err;

  /* What plan counted was before anything changed.  */
  __fa_forget (&fl->f);
  if (fl->end > fl->size0 && (fl->f.flags & O_APPEND))
    err = append (fl), lim = fl->size0;
  /* The byte grow wrote is allocated: a one-byte call at the end of
     file (xfstests generic/438 makes thousands) asks no more.  */
  else if (fl->end > fl->size0 && fl->map)
    err = grow (fl), lim = fl->made == fl->end ? fl->end - 1 : fl->end;
  else
    {
      err = fl->end > fl->size0
	    ? extend (fl, fl->off > fl->size0 ? fl->off : fl->size0) : 0;
      lim = fl->end < fl->size0 ? fl->end : fl->size0;
    }
  /* Every write succeeded, yet the file does not reach the end: a FUSE
     server that accepts writes and drops them.  Not asked of local
     filesystems, where another process's truncation meanwhile would make
     it a false alarm.  */
  if (!err && fl->end > fl->size0 && __fa_remote (fl->f.fs.f_type)
      && (fstat64 (fl->f.fd, &now) < 0 || now.st_size < fl->end))
    err = EIO;
  if (!err && fl->map)
    err = ends_first (fl, lim);
  if (!err)
    err = holes (fl, fl->off, lim, NULL);
  if (!err && (flush (fl) < 0 || fl->wberr))
    err = fl->wberr;
  if (!err)
    err = __fa_sync (&fl->f);
  return err;
}

/* run, through a descriptor of our own (__fa_own), which may map.  */
static int
run_own (void *arg)
{
  struct fill *fl = arg;

  fl->map = mappable (fl);
  return run (fl);
}

static int
fill (struct fill *fl)
{
  struct stat64 now;
  int err;

  fl->edged = 0;
  if (__fa_unwritable (&fl->f))
    return fl->end > fl->size0 ? ftruncate64 (fl->f.fd, fl->end) < 0
	   ? errno : 0 : 0;
  if ((err = plan (fl)))
    return err;
  err = needs_own (fl) ? __fa_own (&fl->f, run_own, fl) : run (fl);
  if (err && fl->made > fl->size0 && fstat64 (fl->f.fd, &now) == 0
      && now.st_size == fl->made)
    ftruncate64 (fl->f.fd, fl->size0);
  return err;
}

/* Whether, after a fill that succeeded, the file falls short of the
   range's end or has a hole in it: another process truncated it
   meanwhile, which the kernel's fallocate, holding the inode's lock,
   would have let happen only before or after.  Asked of calls larger
   than a chunk (a smaller one is one write past the end of file, or one
   hole), where FIEMAP finds holes.  FL->f.st the size now.  */
static int
unsettled (struct fill *fl)
{
  int64_t h = fl->off, d = fl->end;

  if (fl->end - fl->off <= FA_CHUNK || fl->f.fiemap <= 0)
    return 0;
  __fa_forget (&fl->f);
  return fstat64 (fl->f.fd, &fl->f.st) == 0
	 && (fl->f.st.st_size < fl->end || __fa_next_hole (&fl->f, &h, &d) > 0);
}

int
__fa_fill (int fd, int64_t off, int64_t len)
{
  /* Field by field: zeroing the whole, FIEMAP's reply buffer (3.6 KiB,
     written before it is read) with it, made a one-byte call at the end
     of file cost a tenth more than glibc's.  __fa_check fills FL.f.  */
  struct fill fl;
  fl.off = off;
  fl.fsize = -1;
  fl.map = fl.checked = fl.writeback = 0;
  fl.p = NULL;
  fl.at = fl.lo = fl.hi = 0;
  fl.wberr = 0;
  int err = __fa_check (fd, 0, off, len, &fl.f);

  if (err)
    return err;
  /* Only now: the check is what rules out an overflow.  */
  fl.end = off + len;
  __fa_lock (&fl.f);
  /* The size under the lock, if another call of ours may have changed
     it since the check.  */
  if (__fa_stale (&fl.f) && fstat64 (fd, &fl.f.st) < 0)
    err = errno;
  else
    {
      fl.size0 = fl.made = fl.f.st.st_size;
      err = fill (&fl);
      /* Filled again, as a new call would, a few times at most; then
	 EIO: the file keeps changing under the call.  */
      for (int again = 0; !err && unsettled (&fl); again++)
	{
	  fl.size0 = fl.made = fl.f.st.st_size;
	  err = again < 2 ? fill (&fl) : EIO;
	}
      err = __fa_busy (&fl.f, err);
    }
  if (fl.p != NULL)
    munmap (fl.p, fl.len);
  __fa_unlock (&fl.f);
  return err;
}
