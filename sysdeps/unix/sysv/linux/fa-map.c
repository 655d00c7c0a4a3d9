/* The mapping way of posix_fallocate's fallback (fa-fill.c), on Linux
   5.14 and later, a local filesystem, an O_RDWR descriptor
   (__fa_mappable): the pages of each hole are faulted in for writing
   through a shared mapping (madvise MADV_POPULATE_WRITE), 64 MiB windows
   kept across holes.  The filesystem allocates them as for a write, and
   no byte is written through the page cache.  A range past the end of
   file first gets one zero byte at its end (fa-write.c, __fa_grow),
   which makes the rest a hole; its whole huge pages are advised
   MADV_HUGEPAGE (huge folios, one fault each: advise_huge).  A fault
   allocates the whole folio of its page, so within folio_max (8 MiB with
   4 KiB pages) of the range's ends the clean page cache is dropped and
   faults make one-page folios, before all others (edges,
   __fa_ends_first); and where blocks are smaller than a page, the
   range's part of a page that reaches past an end takes the writing way
   (fa-fill.c, fill_hole).  Whether the advice allocates is checked at
   the first hole (fill_hole): where it allocates only once the pages are
   written back (the ext2 driver's page_mkwrite reserves nothing), they
   are written back (msync) before we return; where it does nothing
   (qemu-user accepts it and ignores it), the writing way.

   Race windows, exactly (tests/progs/t-race measures them):
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
     else in user space closes the window.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fa-fill.h"

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

/* Whether FL's descriptor can take the mapping way (the top of this file).  */
int
__fa_mappable (const struct fill *fl)
{
  return fl->f.kind != FA_REMOTE
	 && (fl->f.flags & O_ACCMODE) == O_RDWR && can_populate ();
}

/* MADV_POPULATE_WRITE over [P, P + N) of the window; on tmpfs, whose
   pages are its storage, only over the pages not in memory, which are
   all that can be holes (a page swapped out is allocated too, but not in
   memory: faulted in again, it costs time only).  Over 256 MiB of data,
   faulting each page in cost a fifth of glibc's one-byte reads.  */
static int
advise (struct fill *fl, char *p, size_t n)
{
  size_t page = (size_t) getpagesize (), i, j;
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
int
__fa_flush (struct fill *fl)
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
   back.  */
static int64_t
folio_max (void)
{
  return (int64_t) getpagesize () * 2048;
}

/* X rounded up to a multiple of M, or past it by M: INT64_MAX at most
   (a range may end there).  */
int64_t
__fa_up (int64_t x, int64_t m)
{
  return x > INT64_MAX - m ? INT64_MAX : x - x % m + m;
}

/* The range's start (I 0) or end (I 1) where the file goes on past it
   and it is not a multiple of folio_max, else -1.  */
static int64_t
edge (const struct fill *fl, int i)
{
  int64_t size = __fa_fill_size (fl);
  int64_t e = i == 0 ? fl->off : fl->end < size ? fl->end : 0;

  return e % folio_max () ? e : -1;
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
  lo = lo % huge ? __fa_up (lo, huge) : lo;
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
  int64_t page = getpagesize ();
  int64_t need = (fl->end - at + page - 1) / page * page;
  size_t len = (size_t) (need < WINDOW ? need : WINDOW);

  if (fl->p != NULL && fl->at == at)
    return 0;
  if (fl->p != NULL && (__fa_flush (fl) < 0 || munmap (fl->p, fl->len)))
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
     another window, and a window mapped again has lost the advice (12 KiB
     past the end of a range across 64 MiB were allocated so, xfs).  */
  for (int i = 0; i < 2; i++)
    {
      int64_t m = folio_max (), e = edge (fl, i);
      int64_t a = e - e % m, b = __fa_up (a, m);

      a = a > at ? a : at;
      b = b < at + (int64_t) len ? b : at + (int64_t) len;
      if (e >= 0 && a < b)
	madvise (fl->p + (a - at), (size_t) (b - a), MADV_RANDOM);
    }
  return 0;
}

/* The clean page cache of the block of folio_max from A, which holds
   end I of E (and the other end, if in it), dropped if a folio there
   may reach across an end: only if it holds the page at that end (4,096
   calls of 4 KiB in a row, each dropping its block, took 10 times
   glibc's time), and all of the block, as a folio is dropped only
   whole.  The window maps A.  */
static void
drop_cache (struct fill *fl, int i, const int64_t e[2], int64_t a)
{
  int64_t m = folio_max (), page = getpagesize ();

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
	  return;
	}
    }
}

/* Within folio_max of the range's ends, where the file goes on past
   them, no fault of ours may find or make a folio that reaches outside
   the range.  Before anything else in that block of the file: its page
   cache is dropped where clean if the page at the end is in memory
   (POSIX_FADV_DONTNEED; nothing in it that is not on the disk), the
   window there is read without readahead (MADV_RANDOM, map_window),
   and the holes of the range there are faulted in, each into a folio of
   one page; later readahead from inside the range then stops at them.
   What cannot be dropped (dirty, or mapped by someone) stays, and a
   large folio of it is allocated whole.  Writing the ends instead, block
   by block, lost a concurrent writer's byte, said EFBIG past
   RLIMIT_FSIZE and needed a descriptor of our own through O_DIRECT.
   Without FAULT, only the cache dropped, for bytes written next
   (fa-fill.c, write_ends).  Each once per call.  0, or -1 as
   __fa_populate.  */
int
__fa_edges (struct fill *fl, int64_t from, int64_t to, int fault)
{
  int64_t m = folio_max (), page = getpagesize ();
  int64_t e[2] = { edge (fl, 0), edge (fl, 1) };

  for (int i = 0; i < 2; i++)
    {
      int64_t a = e[i] - e[i] % m, b = __fa_up (a, m);
      int64_t lo = a > from ? a : from, hi = b < to ? b : to;
      /* fl->edged: 1 << I once the cache is dropped, 4 << I faulted.  */
      int drop = !(fl->edged & (1 << i));
      int faults = fault && !(fl->edged & (4 << i));

      if (e[i] < 0 || lo >= hi || !(drop || faults))
	continue;
      fl->edged |= (1 | (fault ? 4 : 0)) << i;
      /* Both ends in one block: the first does all of it.  */
      if (i == 0 && e[1] >= 0 && e[1] - e[1] % m == a)
	fl->edged |= (1 | (fault ? 4 : 0)) << 1;
      if (map_window (fl, a - a % WINDOW) < 0)
	return -1;
      if (drop)
	drop_cache (fl, i, e, a);
      lo -= lo % page;
      if (faults && advise (fl, fl->p + (lo - fl->at), (size_t) (hi - lo)) < 0)
	return -1;
    }
  return 0;
}

/* Allocate the pages of [from, to), which lie inside the file, without
   writing a byte (where only writeback allocates, at the next flush):
   0, or -1 if that cannot be done (an error of the filesystem, ENOSPC
   among them, shows as a failed fault: EFAULT).  */
int
__fa_populate (struct fill *fl, int64_t from, int64_t to)
{
  if (__fa_edges (fl, from, to, 1) < 0)
    return -1;
  from -= from % getpagesize ();
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

/* Whether the pages of the window last populated, within [from, to),
   are all in memory: on tmpfs, whose pages are its storage, that they
   are allocated.  */
static int
resident (struct fill *fl, int64_t from, int64_t to)
{
  long page = getpagesize ();
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
int
__fa_gone (struct fill *fl, int64_t from, int64_t to, int64_t blocks)
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

/* The holes of [FL->off, LIM) within folio_max of its ends allocated
   before the rest (edges): else readahead from faults inside the range
   reads folios in near an end, across it, before the holes there are
   faulted (60 KiB past the end on ext4).  */
int
__fa_ends_first (struct fill *fl, int64_t lim)
{
  int64_t m = folio_max ();

  /* Nothing inside the file (a call past its end): no hole to find.  */
  if (lim <= fl->off)
    return 0;
  for (int i = 0; i < 2; i++)
    {
      int64_t e = edge (fl, i), a = e - e % m;
      int64_t lo = a > fl->off ? a : fl->off, hi = __fa_up (a, m);
      int err;

      hi = hi < lim ? hi : lim;
      if (e >= 0 && lo < hi && (err = __fa_holes (fl, lo, hi, NULL)))
	return err;
    }
  return 0;
}
