/* What the four public functions do, with the policy that fallocate-shim
   passes in the environment for programs that cannot be changed:

   FALLOCATE_SHIM_POLICY
     pass (or unset)  fallocate is the system call; posix_fallocate tries
                      it with mode 0 and falls back on EOPNOTSUPP and
                      ENOSYS to allocation by writing zeros (fa-posix.c).
                      glibc falls back on EOPNOTSUPP only, so under a
                      seccomp policy that denies fallocate it fails.
     fill             the same, and a mode-0 fallocate call refused with
                      EOPNOTSUPP or ENOSYS gets what posix_fallocate gets:
                      fallocate-shim's default, and its supervisor's.
     emulate          the same, and a fallocate call refused with
                      EOPNOTSUPP or ENOSYS is done by writing where its
                      result can be had so (fa-emulate.c).
     off              the library does nothing of its own, for one process
                      of a system that preloads it for all (ld.so.preload):
                      fallocate and posix_fallocate are the next ones the
                      loader knows (the C library's: fallocate is then a
                      cancellation point; in a static program, the system
                      call alone), no trace.  Calls made before the
                      library's constructor has run (by another library's
                      constructor) get pass.
     noop             every call succeeds at once and does nothing.
     an errno         every call fails with it, by name (ENOSPC) or number.
   FALLOCATE_SHIM_TRACE
     a file to which one line per call is appended (fa-trace.c), or - for
     standard error.

   Both are read once, when the library is loaded, and ignored in setuid
   and setgid programs.  */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fa-policy.h"

struct fa_policy __fa_policy;
int (*__fa_next_posix) (int, int64_t, int64_t);
int (*__fa_next_fallocate) (int, int, int64_t, int64_t);
int __fa_passthrough = 1;

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

  if (strcmp (p, "fill") == 0)
    __fa_policy.action = FA_FILL;
  else if (strcmp (p, "off") == 0)
    __fa_policy.action = FA_OFF;
  else if (strcmp (p, "emulate") == 0)
    __fa_policy.action = FA_EMULATE;
  else if (strcmp (p, "noop") == 0)
    __fa_policy.action = FA_NOOP;
  else
    {
      long n = __fa_errno_number (p);

      end = (char *) "";
      if (n == 0)
	n = strtol (p, &end, 10);
      if (*end != '\0' || n <= 0 || n > 4095)
	warn ("FALLOCATE_SHIM_POLICY", p);
      else
	__fa_policy.action = FA_INJECT, __fa_policy.injected = (int) n;
    }
}

/* The trace file is kept as an absolute path, or "-": a copy, because
   programs that set their process title overwrite the environment's
   strings, and absolute, because they change directory.  With "-",
   standard error as it is now: a program that closes it and opens a file
   of its own as descriptor 2 must not find our lines in that file.  */
__attribute__ ((constructor)) static void
load (void)
{
  const char *p = secure_getenv ("FALLOCATE_SHIM_POLICY");
  const char *t = secure_getenv ("FALLOCATE_SHIM_TRACE");
  struct fa_trace *tr = &__fa_policy.trace;
  char cwd[sizeof tr->path];
  struct stat err;

  if (t != NULL && strcmp (t, "-") == 0)
    {
      if (fstat (2, &err) == 0)
	{
	  strcpy (tr->path, t);
	  tr->err_dev = err.st_dev;
	  tr->err_ino = err.st_ino;
	}
    }
  else if (t != NULL && *t != '\0')
    {
      int n = *t == '/' ? snprintf (tr->path, sizeof tr->path, "%s", t)
	: getcwd (cwd, sizeof cwd) == NULL ? -1
	: snprintf (tr->path, sizeof tr->path, "%s/%s", cwd, t);

      if (n < 0 || (size_t) n >= sizeof tr->path)
	{
	  tr->path[0] = '\0';
	  warn ("FALLOCATE_SHIM_TRACE", t);
	}
    }
  if (p != NULL && *p != '\0' && strcmp (p, "pass") != 0)
    parse (p);
  /* Found now, not at a call, which may come from a signal handler.  */
  if (__fa_policy.action == FA_OFF)
    {
      tr->path[0] = '\0';
      __fa_next_posix = (int (*) (int, int64_t, int64_t))
			dlsym (RTLD_NEXT, "posix_fallocate64");
      __fa_next_fallocate = (int (*) (int, int, int64_t, int64_t))
			    dlsym (RTLD_NEXT, "fallocate64");
    }
  __fa_passthrough = (__fa_policy.action == FA_PASS
		      || (__fa_policy.action == FA_OFF && !__fa_next_fallocate))
		     && tr->path[0] == '\0';
}

/* As __fa_posix, not a cancellation point (but the C library's under
   off).  */
long
__fa_fallocate (int fd, int mode, int64_t off, int64_t len)
{
  long ret;
  const char *how = "";
  int cancel;

  if (__fa_policy.action == FA_OFF)
    {
      int saved = errno;

      ret = __fa_next_fallocate (fd, mode, off, len) == 0 ? 0 : -errno;
      errno = saved;
      return ret;
    }
  pthread_setcancelstate (PTHREAD_CANCEL_DISABLE, &cancel);
  if (__fa_policy.action == FA_NOOP)
    ret = 0, how = "noop";
  else if (__fa_policy.action == FA_INJECT)
    ret = -__fa_policy.injected, how = "injected";
  else
    {
      ret = __fa_syscall (fd, mode, off, len);
      if (__fa_writes (&__fa_policy, mode)
	  && (ret == -EOPNOTSUPP || ret == -ENOSYS))
	{
	  int saved = errno;

	  int refused = (int) -ret;

	  ret = -__fa_emulate (fd, mode, off, len, refused);
	  errno = saved;
	  how = ret == 0 ? "emulated" : ret == -refused ? "not emulated"
		: "emulation failed";
	}
    }
  if (__fa_policy.trace.path[0])
    __fa_trace (&__fa_policy.trace, getpid (), "fallocate", 0, fd, mode, off,
		len, (int) -ret, how);
  pthread_setcancelstate (cancel, &cancel);
  return ret;
}
