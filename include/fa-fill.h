/* Internal interfaces of posix_fallocate's fallback, between its files
   (sysdeps/unix/sysv/linux/fa-fill.c: the call; fa-plan.c: the plan;
   fa-map.c: the mapping way; fa-write.c: the writing and appending
   ways); needs _GNU_SOURCE (struct stat64) before any system header.
   Each returns 0 or an error number unless said otherwise.  */
#ifndef FA_FILL_H
#define FA_FILL_H

#include "fa-file.h"

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
  int edged;			/* end I: 1 << I cache dropped, 4 << I faulted */
};

/* The file's size as far as FL knows: the size before, or the size we
   made if that is larger.  */
static inline int64_t
__fa_fill_size (const struct fill *fl)
{
  return fl->made > fl->size0 ? fl->made : fl->size0;
}

/* fa-fill.c.  */
/* The holes of [FROM, TO) allocated; with COUNT, only their bytes added
   to *COUNT.  */
FA_HIDDEN int __fa_holes (struct fill *fl, int64_t from, int64_t to,
			  int64_t *count);

/* fa-plan.c.  */
/* How to go about it, before anything is written: the step, which ways
   work, EFBIG, and ENOSPC if the holes and the new space would not fit.  */
FA_HIDDEN int __fa_plan (struct fill *fl);
/* Whether the caller's descriptor cannot do what this call needs, and
   one of our own must.  */
FA_HIDDEN int __fa_needs_own (struct fill *fl);

/* fa-map.c.  */
/* X rounded up to a multiple of M, or past it by M: INT64_MAX at most.  */
FA_HIDDEN int64_t __fa_up (int64_t x, int64_t m);
/* Whether FL's descriptor can take the mapping way.  */
FA_HIDDEN int __fa_mappable (const struct fill *fl);
/* The pages of [FROM, TO), inside the file, allocated without writing a
   byte: 0, or -1.  */
FA_HIDDEN int __fa_populate (struct fill *fl, int64_t from, int64_t to);
/* The pages populated since the last flush written back: 0, or -1 with
   the error kept in FL->wberr too.  */
FA_HIDDEN int __fa_flush (struct fill *fl);
/* Within a folio of the range's ends, where [FROM, TO) reaches them:
   the clean cache dropped and, with FAULT, the holes faulted in one
   page each: 0, or -1.  */
FA_HIDDEN int __fa_edges (struct fill *fl, int64_t from, int64_t to,
			  int fault);
/* Whether the hole [FROM, TO) is allocated now (BLOCKS: st_blocks
   before, where holes cannot be found).  */
FA_HIDDEN int __fa_gone (struct fill *fl, int64_t from, int64_t to,
			 int64_t blocks);
/* The holes of [FL->off, LIM) near the range's ends allocated before the
   rest.  */
FA_HIDDEN int __fa_ends_first (struct fill *fl, int64_t lim);

/* fa-write.c.  */
/* RLIMIT_FSIZE, asked once per call, INT64_MAX if none.  */
FA_HIDDEN int64_t __fa_limit (struct fill *fl);
/* Whether the writing way can work through FL's descriptor.  */
FA_HIDDEN int __fa_writable (struct fill *fl);
/* Each block of [FROM, TO) that is a hole right now allocated by
   writing one zero byte, through a descriptor of our own where FL's
   cannot.  */
FA_HIDDEN int __fa_write_blocks (struct fill *fl, int64_t from, int64_t to);
/* The part past the end of file: appended (__fa_append), written from
   POS (__fa_extend), or one zero byte at its end (__fa_grow).  */
FA_HIDDEN int __fa_append (struct fill *fl);
FA_HIDDEN int __fa_extend (struct fill *fl, int64_t pos);
FA_HIDDEN int __fa_grow (struct fill *fl);

#endif
