/* t-remount DIR SERVER: the fallback's memory of the last filesystem
   (fa-file.c, statfs_of) across an unmount.  Root; run under fa-seccomp,
   so that the fallback runs.

   A one-byte call at the end of a file on a tmpfs mounted on DIR; DIR
   unmounted; SERVER (tests/tools/fa-badfuse) mounted there, and the same
   call at the end of one of its "still" files, whose writes it accepts
   and drops: EIO, as a FUSE filesystem gets (the fallback checks that
   the file grew).  Taken for the tmpfs, it would be 0.  The kernel gives
   a new mount the lowest mount ID free, often the one just freed: only
   an ID never reused (STATX_MNT_ID_UNIQUE) tells the two apart.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

#define EDGE (64 << 10)		/* where fa-badfuse's files misbehave */

/* The mount ID of PATH that the kernel reuses (STATX_MNT_ID), or 0.  */
static unsigned long long
mount_id (const char *path)
{
  struct statx x;
  unsigned long long id = 0;

  if (statx (AT_FDCWD, path, 0, 0x1000U, &x) == 0 && (x.stx_mask & 0x1000U))
    memcpy (&id, (const char *) &x + 144, sizeof id);
  return id;
}

int
main (int argc, char **argv)
{
  char path[4096];
  int st;

  if (argc != 3)
    {
      fprintf (stderr, "usage: t-remount DIR SERVER\n");
      return 2;
    }
  if (mount ("tmpfs", argv[1], "tmpfs", 0, "size=1m") < 0)
    {
      t_unsupported ("t-remount: mount tmpfs: %s", strerror (errno));
      return t_done ();
    }
  snprintf (path, sizeof path, "%s/a", argv[1]);
  int fd = open (path, O_RDWR | O_CREAT, 0644);
  int r = posix_fallocate64 (fd, 0, 1);
  t_ok (r == 0 && t_size (fd) == 1, "tmpfs, one byte at the end: 0, "
	"size 1 (got %d)", r);
  close (fd);
  unsigned long long before = mount_id (argv[1]);
  if (umount (argv[1]) < 0)
    {
      t_unsupported ("t-remount: umount: %s", strerror (errno));
      return t_done ();
    }
  pid_t pid = fork ();
  if (pid == 0)
    {
      execl (argv[2], argv[2], argv[1], (char *) NULL);
      _exit (127);
    }
  waitpid (pid, &st, 0);
  if (!WIFEXITED (st) || WEXITSTATUS (st) != 0)
    {
      t_unsupported ("t-remount: %s did not mount", argv[2]);
      return t_done ();
    }
  unsigned long long after = mount_id (argv[1]);
  printf ("# mount ID %llu, then %llu (%s)\n", before, after,
	  before == after ? "reused" : "not reused: the case is weaker");
  snprintf (path, sizeof path, "%s/still", argv[1]);
  fd = open (path, O_RDWR | O_CREAT, 0644);
  t_put (fd, 0, EDGE, 1);
  r = posix_fallocate64 (fd, EDGE, 1);
  t_ok (r == EIO, "FUSE mounted where the tmpfs was, its server dropping "
	"the write: EIO (got %d)", r);
  t_ok (t_same (fd, 0, EDGE, 1), "FUSE: the data unchanged");
  close (fd);
  return t_done ();
}
