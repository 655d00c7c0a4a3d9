#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <fallocate.h>
#include <unistd.h>
#include "tcheck.h"

int t_failures;

void
t_ok (int cond, const char *fmt, ...)
{
  va_list ap;

  fputs (cond ? "PASS: " : "FAIL: ", stdout);
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  putchar ('\n');
  fflush (stdout);
  t_failures += !cond;
}

void
t_unsupported (const char *fmt, ...)
{
  va_list ap;

  fputs ("UNSUPPORTED: ", stdout);
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  putchar ('\n');
  fflush (stdout);
}

int
t_done (void)
{
  return t_failures != 0;
}

int
t_filtered (void)
{
  /* Length 0: the kernel says EINVAL, a seccomp filter its errno.  An open
     descriptor, because valgrind answers a bad one itself.  fallocate64,
     not syscall (): on 32-bit ABIs only the stub splits the words right.  */
  int fd = open ("/dev/null", O_RDONLY), e;
  int r = fallocate64 (fd, 0, 0, 0);
  e = r < 0 && errno != EINVAL ? errno : 0;
  close (fd);
  return e;
}

int
t_valgrind (void)
{
  return getenv ("FA_VALGRIND") != NULL;
}

long long
t_proc_field (const char *path, const char *key)
{
  char line[256];
  long long v = -1;
  FILE *f = fopen (path, "re");

  while (f && fgets (line, sizeof line, f))
    if (strncmp (line, key, strlen (key)) == 0)
      v = atoll (line + strlen (key));
  if (f)
    fclose (f);
  return v;
}

int
t_create (const char *dir, const char *name, char *path, size_t size)
{
  int fd;

  snprintf (path, size, "%s/%s", dir, name);
  unlink (path);
  fd = open (path, O_RDWR | O_CREAT | O_TRUNC | O_LARGEFILE, 0644);
  if (fd < 0)
    {
      perror (path);
      exit (2);
    }
  return fd;
}

int
t_sibling (const char *dir, int fd, char *path, size_t size)
{
  struct stat64 a, b;
  char name[32], other[4096];
  int found = -1, i;

  if (fstat64 (fd, &a) < 0)
    return -1;
  for (i = 0; i < 256 && found < 0; i++)
    {
      snprintf (name, sizeof name, "sibling%d", i);
      int f = t_create (dir, name, path, size);
      if (fstat64 (f, &b) == 0 && b.st_ino % 16 == a.st_ino % 16)
	found = f;
      else
	close (f);
    }
  /* The others removed only now, or their inode numbers come back.  */
  for (int j = 0; j < i - 1 || (found < 0 && j < i); j++)
    {
      snprintf (other, sizeof other, "%s/sibling%d", dir, j);
      unlink (other);
    }
  return found;
}

unsigned char
t_byte (unsigned seed, int64_t i)
{
  uint64_t x = (uint64_t) i * 0x9E3779B97F4A7C15ULL + seed * 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 29;
  return (unsigned char) (x % 255 + 1);
}

void
t_put (int fd, int64_t off, size_t len, unsigned seed)
{
  unsigned char *b = malloc (len);

  for (size_t i = 0; i < len; i++)
    b[i] = t_byte (seed, off + (int64_t) i);
  if (pwrite64 (fd, b, len, off) != (ssize_t) len)
    {
      perror ("t_put: pwrite");
      exit (2);
    }
  free (b);
}

int
t_same (int fd, int64_t off, size_t len, unsigned seed)
{
  unsigned char *b = malloc (len);
  int same = pread64 (fd, b, len, off) == (ssize_t) len;

  for (size_t i = 0; same && i < len; i++)
    same = b[i] == t_byte (seed, off + (int64_t) i);
  free (b);
  return same;
}

int
t_zero (int fd, int64_t off, size_t len)
{
  unsigned char *b = malloc (len);
  int zero = pread64 (fd, b, len, off) == (ssize_t) len;

  for (size_t i = 0; zero && i < len; i++)
    zero = b[i] == 0;
  free (b);
  return zero;
}

int64_t
t_alloc (int fd)
{
  struct stat64 st;

  fsync (fd);
  return fstat64 (fd, &st) == 0 ? (int64_t) st.st_blocks * 512 : -1;
}

int64_t
t_size (int fd)
{
  struct stat64 st;

  return fstat64 (fd, &st) == 0 ? st.st_size : -1;
}

int
t_nohole (int fd, int64_t off, int64_t len)
{
  struct
  {
    struct fiemap m;
    struct fiemap_extent e[64];
  } fm;
  int64_t at = off, end = off + len;

  /* FIEMAP, where the filesystem has it, counts unwritten extents (the
     kernel's own preallocation) as allocated, which SEEK_HOLE does not
     on xfs, ext4 and tmpfs.  */
  while (at < end)
    {
      /* All of it: valgrind does not know what the ioctl writes.  */
      memset (&fm, 0, sizeof fm);
      fm.m.fm_start = (uint64_t) at;
      fm.m.fm_length = (uint64_t) (end - at);
      fm.m.fm_extent_count = 64;
      if (ioctl (fd, FS_IOC_FIEMAP, &fm.m) < 0)
	return lseek64 (fd, off, SEEK_HOLE) >= end;
      if (fm.m.fm_mapped_extents == 0)
	return 0;
      for (unsigned i = 0; i < fm.m.fm_mapped_extents; i++)
	{
	  int64_t s = (int64_t) fm.e[i].fe_logical;
	  if (s > at)
	    return 0;
	  if (s + (int64_t) fm.e[i].fe_length > at)
	    at = s + (int64_t) fm.e[i].fe_length;
	}
    }
  return 1;
}

static volatile int cancel_reached;

static void *
cancel_thread (void *arg)
{
  pthread_cancel (pthread_self ());
  ((void (*) (void)) arg) ();
  cancel_reached = 1;
  pthread_testcancel ();
  return NULL;
}

int
t_cancel_pending (void (*fn) (void))
{
  pthread_t t;
  void *ret = NULL;

  cancel_reached = 0;
  if (pthread_create (&t, NULL, cancel_thread, (void *) fn) != 0)
    return 0;
  pthread_join (t, &ret);
  return ret == PTHREAD_CANCELED && cancel_reached;
}

int
t_asan (void)
{
#ifdef __SANITIZE_ADDRESS__
  return 1;
#else
  return 0;
#endif
}

int
t_attr (int fd, int flag, int on)
{
  int a;

  if (ioctl (fd, FS_IOC_GETFLAGS, &a) < 0)
    return errno;
  a = on ? a | flag : a & ~flag;
  return ioctl (fd, FS_IOC_SETFLAGS, &a) < 0 ? errno : 0;
}
