/* What the four public functions do, with the policy that fallocate-shim
   passes in the environment for programs that cannot be changed:

   FALLOCATE_SHIM_POLICY
     pass (or unset)  fallocate is the system call; posix_fallocate tries
                      it with mode 0 and falls back on EOPNOTSUPP and
                      ENOSYS to allocation by writing zeros (fa-fill.c).
                      glibc falls back on EOPNOTSUPP only, so under a
                      seccomp policy that denies fallocate it fails.
     emulate          the same, and a fallocate call refused with
                      EOPNOTSUPP or ENOSYS is done by writing where its
                      result can be had so (fa-emulate.c).
     noop             every call succeeds at once and does nothing.
     an errno         every call fails with it, by name (ENOSPC) or number.
   FALLOCATE_SHIM_TRACE
     a file to which one line per call is appended (opened for each line,
     so that a program closing its descriptors cannot have its own files
     written to), or - for standard error.

   Both are read once, when the library is loaded, and ignored in setuid
   and setgid programs.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fallocate.h>
#include "fa-internal.h"

enum { PASS, EMULATE, NOOP, INJECT };

static int policy, injected;
int __fa_passthrough = 1;

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

static void
warn (const char *what, const char *value)
{
  dprintf (2, "libfallocate: %s=%s: not understood, ignored\n", what, value);
}

/* FALLOCATE_SHIM_POLICY P, not "pass".  */
static void
parse (const char *p)
{
  char *end;

  if (strcmp (p, "emulate") == 0)
    policy = EMULATE;
  else if (strcmp (p, "noop") == 0)
    policy = NOOP;
  else
    {
      long n = strtol (p, &end, 10);

      for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
	if (strcmp (p, errs[i].name) == 0)
	  n = errs[i].e, end = (char *) "";
      if (*end != '\0' || n <= 0 || n > 4095)
	warn ("FALLOCATE_SHIM_POLICY", p);
      else
	policy = INJECT, injected = (int) n;
    }
}

/* The trace file as an absolute path, or "-", or "" for no trace: a
   copy, because programs that set their process title overwrite the
   environment's strings, and absolute, because they change directory.  */
static char trace_path[4096];
/* Standard error as it was: a program that closes it and opens a file
   of its own as descriptor 2 must not find our lines in that file.  */
static struct stat err_was;

__attribute__ ((constructor)) static void
load (void)
{
  const char *p = secure_getenv ("FALLOCATE_SHIM_POLICY");
  const char *t = secure_getenv ("FALLOCATE_SHIM_TRACE");
  char cwd[sizeof trace_path];

  if (t != NULL && strcmp (t, "-") == 0)
    {
      if (fstat (2, &err_was) == 0)
	strcpy (trace_path, t);
    }
  else if (t != NULL && *t != '\0')
    {
      int n = *t == '/' ? snprintf (trace_path, sizeof trace_path, "%s", t)
	: getcwd (cwd, sizeof cwd) == NULL ? -1
	: snprintf (trace_path, sizeof trace_path, "%s/%s", cwd, t);

      if (n < 0 || (size_t) n >= sizeof trace_path)
	{
	  trace_path[0] = '\0';
	  warn ("FALLOCATE_SHIM_TRACE", t);
	}
    }
  if (p != NULL && *p != '\0' && strcmp (p, "pass") != 0)
    parse (p);
  __fa_passthrough = policy == PASS && trace_path[0] == '\0';
}

/* One line of the trace, written at once: "libfallocate[PID]: CALL =
   RESULT (HOW)"; CALL has no mode for posix_fallocate (POSIX).  */
static void
note (const char *fn, int posix, int fd, int mode, int64_t off, int64_t len,
      int err, const char *how)
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
		(long) getpid (), fn, fd);
  if (!posix)
    n += snprintf (line + n, sizeof line - n, "%s, ", m);
  n += snprintf (line + n, sizeof line - n, "%lld, %lld) = %s%s",
		 (long long) off, (long long) len,
		 err == 0 ? "0" : posix ? "" : "-1 ", err ? name : "");
  n += snprintf (line + n, sizeof line - n, "%s%s%s\n", *how ? " (" : "",
		 how, *how ? ")" : "");
  if (trace_path[0] != '-')
    tfd = open (trace_path,
		O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0666);
  else
    tfd = fstat (2, &now) == 0 && now.st_dev == err_was.st_dev
	  && now.st_ino == err_was.st_ino ? 2 : -1;
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

long
__fa_fallocate (int fd, int mode, int64_t off, int64_t len)
{
  long ret;
  const char *how = "";

  if (policy == NOOP)
    ret = 0, how = "noop";
  else if (policy == INJECT)
    ret = -injected, how = "injected";
  else
    {
      ret = __fa_syscall (fd, mode, off, len);
      if (policy == EMULATE && (ret == -EOPNOTSUPP || ret == -ENOSYS))
	{
	  int saved = errno;

	  int refused = (int) -ret;

	  ret = -__fa_emulate (fd, mode, off, len, refused);
	  errno = saved;
	  how = ret == 0 ? "emulated" : ret == -refused ? "not emulated"
		: "emulation failed";
	}
    }
  if (trace_path[0])
    note ("fallocate", 0, fd, mode, off, len, (int) -ret, how);
  return ret;
}

/* posix_fallocate for 64-bit offset and len: 0 or an error number; errno
   is left as it was.  */
int
__fa_posix (int fd, int64_t off, int64_t len)
{
  int saved = errno, err;
  const char *how = "";

  if (policy == NOOP)
    err = 0, how = "noop";
  else if (policy == INJECT)
    err = injected, how = "injected";
  else if ((err = (int) -__fa_syscall (fd, 0, off, len)) == EOPNOTSUPP
	   || err == ENOSYS)
    {
      err = __fa_fill (fd, off, len);
      how = "fallback";
    }
  if (trace_path[0])
    note ("posix_fallocate", 1, fd, 0, off, len, err, how);
  errno = saved;
  return err;
}
