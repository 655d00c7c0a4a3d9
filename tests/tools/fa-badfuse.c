/* fa-badfuse MOUNTPOINT [FLUSHES]: a FUSE filesystem that misbehaves on purpose,
   for tests/libfallocate.fuse/badfuse.exp.  Files live in memory; it
   refuses fallocate (ENOSYS to the kernel, which then answers EOPNOTSUPP
   for good), and a file's name says how its writes misbehave once they
   reach 64 KiB, where the test's data ends:
     zero*    a write there returns 0 bytes (a broken server: the kernel
	      passes the 0 on to pwrite);
     eio*     EIO;
     enospc*  ENOSPC, as a full backing store would, free space or not;
     short*   at most 512 bytes per write there (legal, just slow);
     still*   accepted and dropped: the size never grows past 64 KiB
	      (attributes are not cached, so the kernel asks each time);
     still-ro*  the same, and opened for writing only by its creation:
	      an open for writing afterwards is EACCES (a server's own
	      permission check, which root does not bypass), so a
	      descriptor of the library's own can only read.
   Anything else behaves.  With FLUSHES (a file outside the mount, made
   anew), the server answers FLUSH (which it otherwise leaves to the
   kernel's ENOSYS, after which no more are sent) and writes there, in
   decimal, how many it has answered, before answering (t-flush).
   Single-threaded (-s); it goes into the
   background once mounted, and exits when unmounted (fusermount3 -u).  */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAXFILES 64
#define EDGE (64 << 10)

static struct file
{
  char name[64];
  char *data;
  size_t size, cap;
} files[MAXFILES];

static struct file *
find (const char *path)
{
  for (int i = 0; i < MAXFILES; i++)
    if (files[i].name[0] && strcmp (files[i].name, path + 1) == 0)
      return &files[i];
  return NULL;
}

static int
bad_getattr (const char *path, struct stat *st, struct fuse_file_info *fi)
{
  struct file *f;

  (void) fi;
  memset (st, 0, sizeof *st);
  if (strcmp (path, "/") == 0)
    {
      st->st_mode = S_IFDIR | 0755;
      st->st_nlink = 2;
      return 0;
    }
  if (!(f = find (path)))
    return -ENOENT;
  st->st_mode = S_IFREG | 0644;
  st->st_nlink = 1;
  st->st_size = (off_t) f->size;
  /* No sparse files: every byte is stored.  */
  st->st_blocks = (blkcnt_t) ((f->size + 511) / 512);
  return 0;
}

static int
bad_readdir (const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
	     struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
  (void) off, (void) fi, (void) flags;
  if (strcmp (path, "/") != 0)
    return -ENOENT;
  fill (buf, ".", NULL, 0, 0);
  fill (buf, "..", NULL, 0, 0);
  for (int i = 0; i < MAXFILES; i++)
    if (files[i].name[0])
      fill (buf, files[i].name, NULL, 0, 0);
  return 0;
}

/* zero* files bypass the page cache (direct_io), where the kernel passes
   a write of 0 bytes on to pwrite; through the cache it says EIO.  */
static void
direct (const char *path, struct fuse_file_info *fi)
{
  fi->direct_io = strncmp (path + 1, "zero", 4) == 0;
}

static int
bad_create (const char *path, mode_t mode, struct fuse_file_info *fi)
{
  (void) mode;
  direct (path, fi);
  if (find (path))
    return 0;
  if (strlen (path + 1) >= sizeof files[0].name)
    return -ENAMETOOLONG;
  for (int i = 0; i < MAXFILES; i++)
    if (!files[i].name[0])
      {
	strcpy (files[i].name, path + 1);
	return 0;
      }
  return -ENOSPC;
}

static int
bad_open (const char *path, struct fuse_file_info *fi)
{
  direct (path, fi);
  if (!find (path))
    return -ENOENT;
  if (strncmp (path + 1, "still-ro", 8) == 0
      && (fi->flags & O_ACCMODE) != O_RDONLY)
    return -EACCES;
  return 0;
}

static int
bad_unlink (const char *path)
{
  struct file *f = find (path);

  if (!f)
    return -ENOENT;
  free (f->data);
  memset (f, 0, sizeof *f);
  return 0;
}

/* F's size made N, new bytes zero.  */
static int
resize (struct file *f, size_t n)
{
  if (n > f->cap)
    {
      char *p = realloc (f->data, n);
      if (!p)
	return -ENOSPC;
      f->data = p;
      f->cap = n;
    }
  if (n > f->size)
    memset (f->data + f->size, 0, n - f->size);
  f->size = n;
  return 0;
}

static int
bad_truncate (const char *path, off_t n, struct fuse_file_info *fi)
{
  struct file *f = find (path);

  (void) fi;
  if (!f)
    return -ENOENT;
  if (n < 0 || n > (1 << 30))
    return -EFBIG;
  return resize (f, (size_t) n);
}

static int
bad_read (const char *path, char *buf, size_t n, off_t off,
	  struct fuse_file_info *fi)
{
  struct file *f = find (path);

  (void) fi;
  if (!f)
    return -ENOENT;
  if ((size_t) off >= f->size)
    return 0;
  if (n > f->size - (size_t) off)
    n = f->size - (size_t) off;
  memcpy (buf, f->data + off, n);
  return (int) n;
}

static int
bad_write (const char *path, const char *buf, size_t n, off_t off,
	   struct fuse_file_info *fi)
{
  struct file *f = find (path);
  int err;

  (void) fi;
  if (!f)
    return -ENOENT;
  if (off + (off_t) n > EDGE)
    {
      if (strncmp (f->name, "zero", 4) == 0)
	return 0;
      if (strncmp (f->name, "eio", 3) == 0)
	return -EIO;
      if (strncmp (f->name, "enospc", 6) == 0)
	return -ENOSPC;
      if (strncmp (f->name, "short", 5) == 0 && n > 512)
	n = 512;
      if (strncmp (f->name, "still", 5) == 0)
	return (int) n;
    }
  if (off < 0 || off + (off_t) n > (1 << 30))
    return -EFBIG;
  if ((size_t) off + n > f->size && (err = resize (f, (size_t) off + n)))
    return err;
  memcpy (f->data + off, buf, n);
  return (int) n;
}

static int
bad_statfs (const char *path, struct statvfs *st)
{
  (void) path;
  memset (st, 0, sizeof *st);
  st->f_bsize = st->f_frsize = 4096;
  st->f_blocks = st->f_bfree = st->f_bavail = 1 << 18;	/* 1 GiB */
  st->f_namemax = sizeof files[0].name - 1;
  return 0;
}

/* The size a still* file reports must reach the program each time.  */
static void *
bad_init (struct fuse_conn_info *conn, struct fuse_config *cfg)
{
  (void) conn;
  cfg->attr_timeout = 0;
  cfg->entry_timeout = 0;
  return NULL;
}

/* FLUSH requests answered, and the file that says how many (-1: none,
   and no FLUSH is answered).  */
static unsigned long flushes;
static int flushfd = -1;

static int
bad_flush (const char *path, struct fuse_file_info *fi)
{
  char buf[32];
  int n;

  (void) path, (void) fi;
  n = snprintf (buf, sizeof buf, "%lu\n", ++flushes);
  if (pwrite (flushfd, buf, (size_t) n, 0) != n)
    return -EIO;
  return 0;
}

static struct fuse_operations ops = {
  .init = bad_init,
  .getattr = bad_getattr,
  .readdir = bad_readdir,
  .create = bad_create,
  .open = bad_open,
  .unlink = bad_unlink,
  .truncate = bad_truncate,
  .read = bad_read,
  .write = bad_write,
  .statfs = bad_statfs,
};

int
main (int argc, char **argv)
{
  if (argc != 2 && argc != 3)
    {
      fprintf (stderr, "usage: fa-badfuse MOUNTPOINT [FLUSHES]\n");
      return 2;
    }
  /* Opened before fuse_main goes to the background (and to /).  */
  if (argc == 3)
    {
      flushfd = open (argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		      0644);
      if (flushfd < 0 || write (flushfd, "0\n", 2) != 2)
	{
	  perror (argv[2]);
	  return 1;
	}
      ops.flush = bad_flush;
    }
  char *args[] = { argv[0], "-s", "-o", "default_permissions", argv[1],
		   NULL };
  return fuse_main (5, args, &ops, NULL);
}
