/* t-btrlease BTRFS OTHER: a lease on another filesystem's file of the
   same inode number is not a lease on ours.  A file in OTHER (ext4) and
   one of the same inode number in a new subvolume of BTRFS, whose files
   are numbered from 257 up; a child takes a
   read lease on OTHER's, and posix_fallocate over a hole of BTRFS's,
   through an O_WRONLY descriptor (a descriptor of the library's own
   needed), must allocate: 0, as the kernel answers.  /proc/locks names a
   lease by its superblock's device, which on btrfs is not st_dev.  Run
   under fa-seccomp EOPNOTSUPP.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/btrfs.h>
#include <fallocate.h>
#include "tcheck.h"

#define SIZE (1 << 20)

/* A new file in DIR of an inode number of at least 257 (files are made
   until one has it), its path in PATH: the number, or 0.  */
static ino_t
other_file (const char *dir, char *path, size_t size)
{
  struct stat st;

  for (int i = 0; i < 50000; i++)
    {
      snprintf (path, size, "%s/btrlease.%d", dir, i);
      int fd = open (path, O_WRONLY | O_CREAT | O_EXCL, 0600);
      if (fd < 0 || fstat (fd, &st) < 0)
	return 0;
      close (fd);
      if (st.st_ino >= 257)
	break;
    }
  return st.st_ino >= 257 ? st.st_ino : 0;
}

/* A new file of inode number INO in a new subvolume of the btrfs DIR,
   whose files are numbered from 257 up (files are made until one has
   it), its path in PATH: 0, or -1.  */
static int
btrfs_file (const char *dir, ino_t ino, char *path, size_t size)
{
  struct btrfs_ioctl_vol_args args;
  struct stat st;
  int d = open (dir, O_RDONLY | O_DIRECTORY);

  memset (&args, 0, sizeof args);
  strcpy (args.name, "btrlease");
  if (d < 0 || ioctl (d, BTRFS_IOC_SUBVOL_CREATE, &args) < 0)
    return -1;
  close (d);
  for (int i = 0; i < 50000; i++)
    {
      snprintf (path, size, "%s/btrlease/%d", dir, i);
      int fd = open (path, O_WRONLY | O_CREAT | O_EXCL, 0600);
      if (fd < 0 || fstat (fd, &st) < 0)
	return -1;
      close (fd);
      if (st.st_ino >= ino)
	break;
    }
  return st.st_ino == ino ? 0 : -1;
}

int
main (int argc, char **argv)
{
  char ours[4096], other[4096], x;
  int p[2];

  if (argc != 3)
    return 2;
  ino_t ino = other_file (argv[2], other, sizeof other);
  if (ino == 0 || btrfs_file (argv[1], ino, ours, sizeof ours) < 0)
    {
      t_unsupported ("a lease on another filesystem's file of our inode "
		     "number: no such pair of files made (%s)",
		     strerror (errno));
      return t_done ();
    }
  if (pipe (p) < 0)
    return 1;
  pid_t c = fork ();
  if (c == 0)
    {
      int o = open (other, O_RDONLY);
      x = fcntl (o, F_SETLEASE, F_RDLCK) == 0 ? 'y' : 'n';
      write (p[1], &x, 1);
      pause ();
      _exit (0);
    }
  if (read (p[0], &x, 1) != 1 || x != 'y')
      t_unsupported ("a lease on another filesystem's file of our inode "
		   "number: F_SETLEASE refused");
  else
    {
      int fd = open (ours, O_WRONLY);
      ftruncate (fd, SIZE);
      pwrite (fd, "data", 4, 0);
      int r = posix_fallocate (fd, 4096, 65536);
      struct stat st;
      fstat (fd, &st);
      t_ok (r == 0 && st.st_blocks * 512 >= 65536, "btrfs, O_WRONLY over "
	    "a hole, a lease on another filesystem's file of the same inode "
	    "number: %s (want 0), %lld bytes allocated", r ? strerror (r)
	    : "0", (long long) st.st_blocks * 512);
      close (fd);
    }
  kill (c, SIGKILL);
  waitpid (c, NULL, 0);
  char sub[4096];
  snprintf (sub, sizeof sub, "rm -rf '%s'/btrlease '%s'/btrlease.*",
	    argv[1], argv[2]);
  if (system (sub) != 0)
    return 1;
  return t_done ();
}
