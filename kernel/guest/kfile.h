/* Files of the VM's check programs (kcheck, kfail, kbench): sizes, free space,
   a new file in DIR (the includer's), a pattern written and compared,
   the page cache dropped.  Errors writing end the program with a FAIL
   line.  */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static int64_t
fsize (int fd)
{
  struct stat st;
  return fstat (fd, &st) ? -1 : st.st_size;
}

static int64_t
fblocks (int fd)
{
  struct stat st;
  return fstat (fd, &st) ? -1 : (int64_t) st.st_blocks * 512;
}

static int64_t
ffree (int fd)
{
  struct statvfs v;

  fsync (fd);
  syncfs (fd);
  return fstatvfs (fd, &v) ? -1 : (int64_t) (v.f_bfree * v.f_frsize);
}

static int
create (const char *name, char *path)
{
  snprintf (path, 4096, "%s/%s", dir, name);
  unlink (path);
  int fd = open (path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    {
      printf ("FAIL: open %s: %s\n", path, strerror (errno));
      exit (1);
    }
  return fd;
}

/* The pattern TAG: the offset and the tag in every 8 bytes.  */
static void
pattern (unsigned char *b, size_t n, int64_t off, unsigned tag)
{
  for (size_t i = 0; i < n; i += 8)
    {
      uint64_t v = ((uint64_t) tag << 40) ^ (uint64_t) (off + i);
      memcpy (b + i, &v, 8);
    }
}

static void
put (int fd, int64_t off, size_t n, unsigned tag)
{
  static unsigned char b[1 << 20];

  for (size_t done = 0; done < n; done += sizeof b < n - done ? sizeof b : n - done)
    {
      size_t k = n - done < sizeof b ? n - done : sizeof b;
      pattern (b, k, off + (int64_t) done, tag);
      if (pwrite (fd, b, k, off + (int64_t) done) != (ssize_t) k)
	{
	  printf ("FAIL: pwrite: %s\n", strerror (errno));
	  exit (1);
	}
    }
}

/* 1 if bytes OFF..OFF+N read as the pattern TAG (or as zeros, TAG 0).  */
static int
same (int fd, int64_t off, size_t n, unsigned tag)
{
  static unsigned char b[1 << 16], w[1 << 16];

  for (size_t done = 0; done < n;)
    {
      size_t k = n - done < sizeof b ? n - done : sizeof b;
      if (pread (fd, b, k, off + (int64_t) done) != (ssize_t) k)
	return 0;
      if (tag)
	pattern (w, k, off + (int64_t) done, tag);
      else
	memset (w, 0, k);
      if (memcmp (b, w, k))
	return 0;
      done += k;
    }
  return 1;
}

static void
drop_caches (void)
{
  int fd = open ("/proc/sys/vm/drop_caches", O_WRONLY);

  sync ();
  if (fd >= 0)
    {
      if (write (fd, "3\n", 2) != 2)
	perror ("drop_caches");
      close (fd);
    }
}
