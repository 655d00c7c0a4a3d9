/* t-model DIR SEED NOPS: random operations on one file, each checked
   against an in-memory model of it, in the style of xfstests' fsx.

   Operations: pwrite, ftruncate, pread, fallocate in every mode Linux has
   (0, KEEP_SIZE, PUNCH_HOLE|KEEP_SIZE, ZERO_RANGE with and without
   KEEP_SIZE, COLLAPSE_RANGE, INSERT_RANGE, UNSHARE_RANGE with and without
   KEEP_SIZE, WRITE_ZEROES) and posix_fallocate.  After every step the
   file's size and every byte must be what the model says.  A mode the
   filesystem refuses must fail with the errno the model predicts and
   change nothing.

   What the filesystem can do is probed once on a scratch file (a mode is
   supported or answers EOPNOTSUPP); which errno a call gets is then the
   model's prediction from that and the arguments.  Under fa-seccomp every
   fallocate gets the filter's errno, and posix_fallocate must still work.

   The file lives at BASE..BASE+MAXLEN: an odd seed puts BASE above 4 GiB
   (a hole below), so that offsets have differing 32-bit halves.

   A failure prints the seed and the last operations; the same DIR
   filesystem, SEED and NOPS replay it exactly.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

#define MAXLEN (256 << 10)
#define LOGN 64

enum op { PWRITE, TRUNCATE, PREAD, FALLOC, POSIX, NOP_KINDS };

static const int modes[] = {
  0, FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
  FALLOC_FL_ZERO_RANGE, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
  FALLOC_FL_COLLAPSE_RANGE, FALLOC_FL_INSERT_RANGE,
  FALLOC_FL_UNSHARE_RANGE, FALLOC_FL_UNSHARE_RANGE | FALLOC_FL_KEEP_SIZE,
  FALLOC_FL_WRITE_ZEROES,
};
#define NMODES ((int) (sizeof modes / sizeof modes[0]))

static const char *const mode_names[] = {
  "alloc", "keep_size", "punch_hole", "zero_range", "zero_range|keep",
  "collapse", "insert", "unshare", "unshare|keep", "write_zeroes",
};

static unsigned char model[MAXLEN], buf[MAXLEN];
static int64_t msize;		/* the model's size, relative to BASE */
static int64_t base, bs;
static int fd, filt, supported[NMODES], fallback;
static uint64_t rng, seed;

/* Calls made and calls refused, per kind of operation (FALLOC: per mode).  */
static long made[NOP_KINDS + NMODES], refused[NOP_KINDS + NMODES];

static struct entry
{
  long n;
  enum op op;
  int mode, want, got;
  int64_t off, len;
} oplog[LOGN];

static uint64_t
rnd (void)
{
  /* xorshift64*: small, and the same sequence everywhere.  */
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 0x2545F4914F6CDD1DULL;
}

static int64_t
below (int64_t n)
{
  return n > 0 ? (int64_t) (rnd () % (uint64_t) n) : 0;
}

/* An offset in [0, MAXLEN): often on a block boundary or near the end of
   file, where filesystems have their edge cases.  */
static int64_t
pick_off (void)
{
  int64_t o;

  switch (rnd () % 4)
    {
    case 0:
      o = below (MAXLEN);
      break;
    case 1:
      o = below (MAXLEN / bs) * bs;
      break;
    case 2:
      o = msize + below (4 * bs) - 2 * bs;
      break;
    default:
      o = below (msize + 1);
      break;
    }
  return o < 0 ? 0 : o >= MAXLEN ? MAXLEN - 1 : o;
}

/* A length for a range at OFF, ending at MAXLEN at most.  */
static int64_t
pick_len (int64_t off)
{
  int64_t room = MAXLEN - off, l;

  switch (rnd () % 4)
    {
    case 0:
      l = 1 + below (64);
      break;
    case 1:
      l = (1 + below (16)) * bs;
      break;
    default:
      l = 1 + below (room < 65536 ? room : 65536);
      break;
    }
  return l < room ? l : room;
}

static const char *
op_name (const struct entry *e)
{
  static const char *const names[] = {
    "pwrite", "ftruncate", "pread", "fallocate", "posix_fallocate"
  };
  return e->op == FALLOC ? mode_names[e->mode] : names[e->op];
}

static void
fail (long n, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3), noreturn));

static void
fail (long n, const char *fmt, ...)
{
  va_list ap;
  char msg[256];

  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  printf ("# last operations (offsets relative to base 0x%llx):\n",
	  (unsigned long long) base);
  for (long i = n - LOGN + 1 < 0 ? 0 : n - LOGN + 1; i <= n; i++)
    {
      const struct entry *e = &oplog[i % LOGN];
      printf ("# %ld %s off 0x%llx len 0x%llx: want %d got %d\n", e->n,
	      op_name (e), (unsigned long long) e->off,
	      (unsigned long long) e->len, e->want, e->got);
    }
  t_ok (0, "model: step %ld: %s (replay: t-model DIR %llu %ld)", n, msg,
	(unsigned long long) seed, n + 1);
  exit (1);
}

/* The file must be the model: size, every byte, and nothing below BASE.  */
static void
check (long n)
{
  struct stat64 st;
  ssize_t r;

  if (fstat64 (fd, &st) < 0 || st.st_size != base + msize)
    fail (n, "size %lld, model %lld", (long long) st.st_size - base,
	  (long long) msize);
  r = pread64 (fd, buf, (size_t) msize, base);
  if (r != msize)
    fail (n, "read %zd of %lld bytes", r, (long long) msize);
  if (memcmp (buf, model, (size_t) msize) != 0)
    for (int64_t i = 0;; i++)
      if (buf[i] != model[i])
	fail (n, "byte 0x%llx is 0x%02x, model 0x%02x", (unsigned long long) i,
	      buf[i], model[i]);
  if (base > 0 && !t_zero (fd, base - 4096, 4096))
    fail (n, "bytes below base changed");
}

static int
block_aligned (int64_t off, int64_t len)
{
  return (off | len) % bs == 0;
}

/* The errno the model predicts for fallocate MODE (index M) on [OFF,
   OFF+LEN); 0 if it must succeed.  *EITHER is set to a second errno the
   kernel may give instead: for a mode the filesystem refuses, whether it
   refuses before checking the arguments differs between filesystems.  */
static int
predict (int m, int64_t off, int64_t len, int *either)
{
  int mode = modes[m], bad = 0;

  *either = -1;
  if (filt)
    return filt;
  if (mode == FALLOC_FL_COLLAPSE_RANGE)
    bad = !block_aligned (off, len) || off + len >= msize;
  else if (mode == FALLOC_FL_INSERT_RANGE)
    bad = !block_aligned (off, len) || off >= msize;
  if (!supported[m])
    {
      if (bad)
	*either = EINVAL;
      return EOPNOTSUPP;
    }
  return bad ? EINVAL : 0;
}

/* What a successful call does to the model.  */
static void
apply (int mode, int64_t off, int64_t len)
{
  int64_t end = off + len, lim = end < msize ? end : msize;

  switch (mode)
    {
    case FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE:
    case FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE:
      if (lim > off)
	memset (model + off, 0, (size_t) (lim - off));
      return;
    case FALLOC_FL_ZERO_RANGE:
    case FALLOC_FL_WRITE_ZEROES:
      memset (model + off, 0, (size_t) len);
      break;
    case FALLOC_FL_COLLAPSE_RANGE:
      memmove (model + off, model + end, (size_t) (msize - end));
      memset (model + msize - len, 0, (size_t) len);
      msize -= len;
      return;
    case FALLOC_FL_INSERT_RANGE:
      memmove (model + end, model + off, (size_t) (msize - off));
      memset (model + off, 0, (size_t) len);
      msize += len;
      return;
    case FALLOC_FL_KEEP_SIZE:
    case FALLOC_FL_UNSHARE_RANGE | FALLOC_FL_KEEP_SIZE:
      return;
    }
  /* 0, ZERO_RANGE, UNSHARE_RANGE, WRITE_ZEROES: the size grows to the
     end.  */
  if (end > msize)
    msize = end;
}

static void
step (long n)
{
  struct entry *e = &oplog[n % LOGN];
  int64_t off = pick_off (), len = pick_len (off);
  int either = -1;

  memset (e, 0, sizeof *e);
  e->n = n;
  e->op = (enum op) (rnd () % NOP_KINDS);
  switch (e->op)
    {
    case PWRITE:
      {
	unsigned seed = (unsigned) rnd ();
	for (int64_t i = 0; i < len; i++)
	  buf[i] = t_byte (seed, off + i);
	e->want = (int) len;
	e->got = (int) pwrite64 (fd, buf, (size_t) len, base + off);
	if (e->got == len)
	  {
	    memcpy (model + off, buf, (size_t) len);
	    if (off + len > msize)
	      msize = off + len;
	  }
	break;
      }
    case TRUNCATE:
      off = below (MAXLEN + 1);
      len = 0;
      e->got = ftruncate64 (fd, base + off) ? errno : 0;
      if (e->got == 0)
	{
	  if (off < msize)
	    memset (model + off, 0, (size_t) (msize - off));
	  msize = off;
	}
      break;
    case PREAD:
      {
	/* Past the end of file too: the count must stop at the size.  */
	int64_t want = off >= msize ? 0 : (off + len < msize ? len : msize - off);
	e->want = (int) want;
	e->got = (int) pread64 (fd, buf, (size_t) len, base + off);
	if (e->got == want && memcmp (buf, model + off, (size_t) want) != 0)
	  e->got = -2;
	break;
      }
    case FALLOC:
      {
	int m = (int) (rnd () % NMODES);
	int mode = modes[m];
	if (mode == FALLOC_FL_COLLAPSE_RANGE || mode == FALLOC_FL_INSERT_RANGE)
	  {
	    /* Mostly valid: block aligned, inside the file, room to grow.  */
	    if (rnd () % 8 && msize > bs)
	      {
		int64_t blocks = msize / bs;
		off = below (blocks) * bs;
		len = (1 + below (blocks - off / bs)) * bs;
		if (mode == FALLOC_FL_INSERT_RANGE && msize + len > MAXLEN)
		  len = (MAXLEN - msize) / bs * bs;
		if (len == 0)
		  len = bs;
	      }
	    if (mode == FALLOC_FL_INSERT_RANGE && msize + len > MAXLEN)
	      len = MAXLEN - msize;
	    if (len <= 0)
	      {
		e->op = PREAD;	/* no room: a harmless step instead */
		e->want = e->got = 0;
		break;
	      }
	  }
	e->mode = m;
	e->want = predict (m, off, len, &either);
	e->got = fallocate64 (fd, mode, base + off, len) ? errno : 0;
	if (e->got == 0 && e->want == 0)
	  apply (mode, off, len);
	break;
      }
    case POSIX:
      if (rnd () % 64 == 0)
	len = 0;		/* EINVAL on both paths */
      e->want = len ? 0 : EINVAL;
      e->got = rnd () % 2 ? posix_fallocate64 (fd, base + off, len)
		: posix_fallocate (fd, base + off, len);
      if (e->got == 0)
	apply (0, off, len);
      if (e->got == 0 && fallback && !t_nohole (fd, base + off, len))
	e->got = -3;		/* the fallback must leave no hole */
      break;
    default:
      break;
    }
  e->off = off;
  e->len = len;
  if (e->got != e->want && e->got != either)
    fail (n, "%s returned %d, model says %d", op_name (e), e->got, e->want);
  check (n);
  int k = e->op == FALLOC ? NOP_KINDS + e->mode : (int) e->op;
  made[k]++;
  refused[k] += e->op == FALLOC || e->op == POSIX ? e->got != 0 : 0;
}

/* Which modes the filesystem takes, on a scratch file of 8 blocks.  */
static void
probe (const char *dir)
{
  char path[4096];

  for (int m = 0; m < NMODES; m++)
    {
      int p = t_create (dir, "model-probe", path, sizeof path);
      t_put (p, 0, (size_t) (8 * bs), 1);
      int r = fallocate64 (p, modes[m], 2 * bs, 2 * bs) ? errno : 0;
      supported[m] = r == 0;
      if (r != 0 && r != EOPNOTSUPP && r != filt)
	t_ok (0, "model: probe of %s failed with %d", mode_names[m], r);
      printf ("# %s: %s\n", mode_names[m], r ? strerror (r) : "supported");
      close (p);
      unlink (path);
    }
  int p = t_create (dir, "model-probe", path, sizeof path);
  fallback = filt || fallocate64 (p, 0, 0, 1);
  close (p);
  unlink (path);
}

int
main (int argc, char **argv)
{
  char path[4096];
  struct statvfs v;

  if (argc != 4)
    {
      fprintf (stderr, "usage: t-model DIR SEED NOPS\n");
      return 2;
    }
  seed = strtoull (argv[2], NULL, 0);
  long nops = strtol (argv[3], NULL, 0);
  rng = seed * 0x9E3779B97F4A7C15ULL + 1;
  base = seed % 2 ? (int64_t) 0x100000000LL : 0;

  fd = t_create (argv[1], "model", path, sizeof path);
  if (fstatvfs (fd, &v) < 0)
    {
      perror ("fstatvfs");
      return 2;
    }
  bs = (int64_t) v.f_bsize;
  filt = t_filtered ();
  probe (argv[1]);
  printf ("# t-model %s seed %llu, %ld ops, block %lld, base 0x%llx, %s\n",
	  argv[1], (unsigned long long) seed, nops, (long long) bs,
	  (unsigned long long) base, fallback ? "fallback" : "system call");
  if (ftruncate64 (fd, base) < 0)
    {
      perror ("ftruncate");
      return 2;
    }
  for (long n = 0; n < nops; n++)
    step (n);
  printf ("# calls (refused):");
  for (int k = 0; k < NOP_KINDS + NMODES; k++)
    if (k != FALLOC)
      printf (" %s %ld (%ld)", k < NOP_KINDS ? op_name (&(struct entry) { .op = k })
	      : mode_names[k - NOP_KINDS], made[k], refused[k]);
  putchar ('\n');
  t_ok (1, "model: ops, every step as the model says");
  close (fd);
  unlink (path);
  return t_done ();
}
