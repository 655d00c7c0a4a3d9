/* fallocate-shim's policy (io/fa-policy.c) and trace (io/fa-trace.c).
   Nothing here assumes that the calls traced are the process's own: a
   supervisor holding a policy for another process can use it too.  */
#ifndef FA_POLICY_H
#define FA_POLICY_H

#include <stdint.h>
#include <sys/types.h>
#include "fa-internal.h"

/* Where the trace goes.  */
struct fa_trace
{
  /* An absolute path, "-" for standard error, or "" for no trace.  */
  char path[4096];
  /* With "-", standard error as it was when the trace was set: lines go
     to descriptor 2 only while it is that file.  */
  dev_t err_dev;
  ino_t err_ino;
};

/* What the calls do, and their trace.  */
struct fa_policy
{
  enum { FA_PASS, FA_FILL, FA_EMULATE, FA_NOOP, FA_INJECT, FA_OFF } action;
  int injected;			/* FA_INJECT's error number */
  struct fa_trace trace;
};

/* This process's, from the environment when the library is loaded.  */
FA_HIDDEN extern struct fa_policy __fa_policy;
/* Under off, the posix_fallocate64 and fallocate64 after ours (the C
   library's), or NULL where there is none (a static program).  */
FA_HIDDEN extern int (*__fa_next_posix) (int, int64_t, int64_t);
FA_HIDDEN extern int (*__fa_next_fallocate) (int, int, int64_t, int64_t);

/* The error number named NAME (ENOSPC), or 0.  */
FA_HIDDEN int __fa_errno_number (const char *name);

/* One line of trace T for a call made by process PID: fallocate (FN
   "fallocate", POSIX 0, 0 or -ERR) or posix_fallocate (POSIX 1, 0 or
   ERR), and HOW it was done ("" for the system call).  Leaves errno
   alone.  */
FA_HIDDEN void __fa_trace (const struct fa_trace *t, pid_t pid,
			   const char *fn, int posix, int fd, int mode,
			   int64_t off, int64_t len, int err, const char *how);

/* Whether a call of MODE that the kernel refuses (EOPNOTSUPP, ENOSYS)
   is answered by writing under P: mode 0 under fill and emulate (the
   fallback of posix_fallocate), every mode it can under emulate.  */
FA_HIDDEN int __fa_writes (const struct fa_policy *p, int mode);

/* A fallocate call of another process, made through FD (a copy of its
   descriptor; unused by FA_NOOP and FA_INJECT), answered under policy P
   as fallocate-supervise answers it (io/fa-answer.c): 0 or an error
   number, and in *HOW what __fa_trace is told.  Leaves errno alone; no
   trace.  */
FA_HIDDEN int __fa_answer (const struct fa_policy *p, int fd, int mode,
			   int64_t off, int64_t len, const char **how);

#endif
