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
#include <unistd.h>
#include <fallocate.h>
#include "fa-internal.h"

enum { PASS, EMULATE, NOOP, INJECT };

static int policy, injected;
static const char *trace;

/* The errors these functions can give, for the trace and the policy.  */
static const struct { int e; const char *name; } errs[] = {
  { EPERM, "EPERM" }, { EINTR, "EINTR" }, { EIO, "EIO" },
  { EBADF, "EBADF" }, { EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" },
  { EACCES, "EACCES" }, { EFAULT, "EFAULT" }, { ENODEV, "ENODEV" },
  { EISDIR, "EISDIR" }, { EINVAL, "EINVAL" }, { ETXTBSY, "ETXTBSY" },
  { EFBIG, "EFBIG" }, { ENOSPC, "ENOSPC" }, { ESPIPE, "ESPIPE" },
  { EROFS, "EROFS" }, { ENOSYS, "ENOSYS" }, { EOPNOTSUPP, "EOPNOTSUPP" },
  { EDQUOT, "EDQUOT" },
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

__attribute__ ((constructor)) static void
load (void)
{
  const char *p = secure_getenv ("FALLOCATE_SHIM_POLICY");
  char *end;

  trace = secure_getenv ("FALLOCATE_SHIM_TRACE");
  if (trace != NULL && *trace == '\0')
    trace = NULL;
  if (p == NULL || *p == '\0' || strcmp (p, "pass") == 0)
    return;
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

/* One line of the trace: "libfallocate[PID]: CALL = RESULT (HOW)".  */
static void
note (const char *fn, int fd, int mode, int64_t off, int64_t len, int err,
      const char *how)
{
  char line[256], m[128] = "0", e[16];
  const char *name = e;
  int saved = errno, n, tfd;

  if (mode != 0 && mode != -1)
    {
      n = 0;
      for (unsigned i = 0; i < 8; i++)
	if (mode & (1 << i))
	  n += snprintf (m + n, sizeof m - n, "%s%s", n ? "|" : "", modes[i]);
      if (mode & ~0xff)
	snprintf (m + n, sizeof m - n, "%s0x%x", n ? "|" : "",
		  (unsigned) mode & ~0xffu);
    }
  snprintf (e, sizeof e, "%d", err);
  for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
    if (errs[i].e == err)
      name = errs[i].name;
  if (mode == -1)
    n = snprintf (line, sizeof line, "%s(%d, %lld, %lld) = %s", fn, fd,
		  (long long) off, (long long) len, err ? name : "0");
  else
    n = snprintf (line, sizeof line, "%s(%d, %s, %lld, %lld) = %s%s", fn,
		  fd, m, (long long) off, (long long) len, err ? "-1 " : "0",
		  err ? name : "");
  snprintf (line + n, sizeof line - n, "%s%s%s\n", *how ? " (" : "", how,
	    *how ? ")" : "");
  if (strcmp (trace, "-") == 0)
    tfd = 2;
  else
    tfd = open (trace, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY,
		0666);
  if (tfd >= 0)
    {
      dprintf (tfd, "libfallocate[%ld]: %s", (long) getpid (), line);
      if (tfd != 2)
	close (tfd);
    }
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
	  how = ret == -refused ? "not emulated" : "emulated";
	}
    }
  if (trace)
    note ("fallocate", fd, mode, off, len, (int) -ret, how);
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
  if (trace)
    note ("posix_fallocate", fd, -1, off, len, err, how);
  errno = saved;
  return err;
}
