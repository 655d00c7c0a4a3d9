/* The trace of fallocate-shim (FALLOCATE_SHIM_TRACE): one line per call,
   "libfallocate[PID]: CALL = RESULT (HOW)", and the names it gives error
   numbers and modes.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fa-policy.h"

/* The errors these functions can give, for the trace and the policy.  */
static const struct { int e; const char *name; } errs[] = {
  { EPERM, "EPERM" }, { EINTR, "EINTR" }, { EIO, "EIO" },
  { EBADF, "EBADF" }, { EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" },
  { EACCES, "EACCES" }, { EFAULT, "EFAULT" }, { ENODEV, "ENODEV" },
  { EISDIR, "EISDIR" }, { EINVAL, "EINVAL" }, { ETXTBSY, "ETXTBSY" },
  { EFBIG, "EFBIG" }, { ENOSPC, "ENOSPC" }, { ESPIPE, "ESPIPE" },
  { EROFS, "EROFS" }, { ENOSYS, "ENOSYS" }, { EOPNOTSUPP, "EOPNOTSUPP" },
  { EDQUOT, "EDQUOT" }, { ENOENT, "ENOENT" }, { EMFILE, "EMFILE" },
  { ENFILE, "ENFILE" }, { EXDEV, "EXDEV" }, { EBUSY, "EBUSY" },
  { EOPNOTSUPP, "ENOTSUP" },	/* the same number on Linux, parsed only */
};

static const char *const modes[] = {
  "KEEP_SIZE", "PUNCH_HOLE", "NO_HIDE_STALE", "COLLAPSE_RANGE",
  "ZERO_RANGE", "INSERT_RANGE", "UNSHARE_RANGE", "WRITE_ZEROES",
};

int
__fa_errno_number (const char *name)
{
  for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
    if (strcmp (name, errs[i].name) == 0)
      return errs[i].e;
  return 0;
}

/* The trace file PATH, opened for one line, as a descriptor above 2, or
   -1.  Opened for each line, so that a program that closes its
   descriptors and opens files of its own cannot find our lines in them.

   A trace path is often in a shared directory such as /tmp, and the
   program may be root's: only a regular file of the process's effective
   user with a single link gets lines, created if missing.  So no symbolic
   link (O_NOFOLLOW), no hard link to someone's file, no file of another
   user planted in a sticky directory (the kernel's protected_symlinks,
   protected_hardlinks and protected_regular, all of which an
   administrator can turn off, refuse less), no FIFO and no device.  A
   file that is not regular is not even opened, as opening a device can
   act on it (a tape rewinds, a watchdog starts); one put there between
   the lstat and the open is opened without waiting (O_NONBLOCK: a FIFO
   without reader) and closed unwritten, and only a process allowed to
   make device nodes can put a device there.  Created mode 0600: lines
   tell what the program does with its files, for the user alone to read,
   and the file must not be one that others can write to when another
   process of the same program appends to it.

   open gives the lowest free descriptor, which is 1 in a program that
   closed standard output: left there, the program's own output would go
   into the trace for good, so it is moved at once.  A window remains
   while the program has one of 0, 1 and 2 closed, between the open and
   the close (two system calls): another thread's write to that descriptor
   goes into the trace, and its open gets a higher descriptor than it
   would have.  Only an open in another descriptor table (a child process
   per line) would have none, at a cost out of proportion, and seccomp
   sandboxes that refuse fallocate often refuse new processes too.  */
static int
open_trace (const char *path)
{
  struct stat st;
  int fd;

  if (lstat (path, &st) == 0 && !S_ISREG (st.st_mode))
    return -1;
  fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY
		   | O_NOFOLLOW | O_NONBLOCK, 0600);
  if (fd >= 0 && fd <= 2)
    {
      int high = fcntl (fd, F_DUPFD_CLOEXEC, 3);

      close (fd);
      fd = high;
    }
  if (fd >= 0 && (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)
		  || st.st_uid != geteuid () || st.st_nlink != 1))
    {
      close (fd);
      fd = -1;
    }
  return fd;
}

/* CALL has no mode for posix_fallocate (POSIX).  The line is written at
   once, so that lines of concurrent calls do not mix.  */
void
__fa_trace (const struct fa_trace *t, pid_t pid, const char *fn, int posix,
	    int fd, int mode, int64_t off, int64_t len, int err,
	    const char *how)
{
  char line[512], m[128] = "0", e[16];
  const char *name = e;
  int saved = errno, n = 0, tfd;
  struct stat now;

  for (unsigned i = 0; i < 8; i++)
    if (mode & (1 << i))
      n += snprintf (m + n, sizeof m - n, "%s%s", n ? "|" : "", modes[i]);
  if (mode & ~0xff)
    snprintf (m + n, sizeof m - n, "%s0x%x", n ? "|" : "",
	      (unsigned) mode & ~0xffu);
  snprintf (e, sizeof e, "%d", err);
  for (size_t i = 0; name == e && i < sizeof errs / sizeof errs[0]; i++)
    if (errs[i].e == err)
      name = errs[i].name;
  n = snprintf (line, sizeof line, "libfallocate[%ld]: %s(%d, ",
		(long) pid, fn, fd);
  if (!posix)
    n += snprintf (line + n, sizeof line - n, "%s, ", m);
  n += snprintf (line + n, sizeof line - n, "%lld, %lld) = %s%s",
		 (long long) off, (long long) len,
		 err == 0 ? "0" : posix ? "" : "-1 ", err ? name : "");
  n += snprintf (line + n, sizeof line - n, "%s%s%s\n", *how ? " (" : "",
		 how, *how ? ")" : "");
  if (t->path[0] != '-')
    tfd = open_trace (t->path);
  else
    tfd = fstat (2, &now) == 0 && now.st_dev == t->err_dev
	  && now.st_ino == t->err_ino ? 2 : -1;
  if (tfd >= 0)
    {
      /* A failed write has nowhere to be reported.  */
      ssize_t w = write (tfd, line, (size_t) n);
      (void) w;
    }
  if (tfd > 2)
    close (tfd);
  errno = saved;
}
