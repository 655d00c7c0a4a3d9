/* t-badfuse DIR: posix_fallocate on a FUSE server that misbehaves
   (tests/tools/fa-badfuse mounted at DIR), where the fallback can only
   write.  Each file holds 64 KiB of data; the call asks for 4 MiB, and
   the server's writes past the data return 0 bytes, EIO or ENOSPC, or
   take 512 bytes at a time.  The call must return (in a child, killed
   after 60 s: a loop on a write of 0 bytes is forever), with the error
   the server gave (0 bytes written: EIO), the data unchanged, and on
   failure the size set back to what it was.  A server that accepts
   writes and drops them (the size never grows) gets EIO, through an
   O_APPEND descriptor too: one the library reopens for writing (then
   extends the file at exact offsets), and one it cannot (the server
   refuses opens for writing after the file's creation), whose open file
   it appends through (fa-fill.c's append), counting what it appended: a
   range from the end of file.  From 0, EBADF before writing: the data
   inside, where holes cannot be found, cannot be reached by appending.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

#define DATA (64 << 10)
#define LEN (4 << 20)

/* posix_fallocate (FD, OFF, LEN - OFF) in a child: its result, or -1
   if it did not return within 60 s (then killed: SIGKILL, as the
   library blocks every other signal while its own thread works).  */
static int
call (int fd, int off)
{
  int st, i = 0;
  pid_t pid = fork (), r = 0;

  if (pid == 0)
    _exit (posix_fallocate64 (fd, off, LEN - off));
  while (pid > 0 && (r = waitpid (pid, &st, WNOHANG)) == 0 && i++ < 6000)
    usleep (10000);
  if (pid > 0 && r == 0)
    {
      kill (pid, SIGKILL);
      waitpid (pid, &st, 0);
      return -1;
    }
  return r == pid && WIFEXITED (st) ? WEXITSTATUS (st) : -1;
}

/* FLAGS: 0, the descriptor that created the file; -1, the same with
   O_APPEND set by fcntl, and the range from the end of file (-2: from
   0); else a descriptor opened with FLAGS.  */
static void
one (const char *dir, const char *name, int flags, int want)
{
  char path[4096];
  int fd = t_create (dir, name, path, sizeof path);

  t_put (fd, 0, DATA, 7);
  if (flags < 0 && fcntl (fd, F_SETFL, O_APPEND) < 0)
    {
      t_ok (0, "%s: F_SETFL O_APPEND (%s)", name, strerror (errno));
      close (fd);
      unlink (path);
      return;
    }
  int cfd = flags > 0 ? open (path, flags) : fd;
  int r = call (cfd, flags == -1 ? DATA : 0);
  if (cfd != fd)
    close (cfd);
  t_ok (r == want, "%s: posix_fallocate returns %d (got %d%s)", name, want,
	r, r < 0 ? ": hung or killed" : "");
  t_ok (t_same (fd, 0, DATA, 7), "%s: the data unchanged", name);
  if (want)
    t_ok (t_size (fd) == DATA, "%s: size set back to %d (got %lld)", name,
	  DATA, (long long) t_size (fd));
  else
    t_ok (t_size (fd) == LEN && t_zero (fd, DATA, LEN - DATA),
	  "%s: size %d, zeros past the data (size %lld)", name, LEN,
	  (long long) t_size (fd));
  close (fd);
  unlink (path);
}

/* Whether pidfd_getfd can copy a descriptor of ours (Linux 5.6; not
   under valgrind 3.19, which has no pidfd_open): without it, a file the
   library cannot reopen for writing gets EBADF, as libfallocate(3)
   says.  */
static int
copyable (void)
{
#if defined SYS_pidfd_open && defined SYS_pidfd_getfd
  int p = (int) syscall (SYS_pidfd_open, getpid (), 0), c = -1;

  if (p >= 0)
    {
      c = (int) syscall (SYS_pidfd_getfd, p, 1, 0);
      close (p);
    }
  if (c >= 0)
    close (c);
  return c >= 0;
#else
  return 0;
#endif
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      fprintf (stderr, "usage: t-badfuse DIR\n");
      return 2;
    }
  one (argv[1], "plain", 0, 0);
  one (argv[1], "short", 0, 0);
  one (argv[1], "zero", 0, EIO);
  one (argv[1], "eio", 0, EIO);
  one (argv[1], "enospc", 0, ENOSPC);
  /* Writes that succeed and change nothing: EIO, not 0 nor a loop.  */
  one (argv[1], "still", 0, EIO);
  one (argv[1], "still-append", O_WRONLY | O_APPEND, EIO);
  /* No descriptor of the library's own can write (the server refuses
     the open): appended through the caller's.  */
  one (argv[1], "still-ro-append", -1, copyable () ? EIO : EBADF);
  one (argv[1], "still-ro-append0", -2, EBADF);
  return t_done ();
}
