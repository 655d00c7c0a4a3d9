/* One call of COMMAND answered by fallocate-supervise (sv_answer).

   It takes the caller's descriptor with pidfd_getfd (the same open file
   description, so the caller's offset is the one the fallback leaves
   alone), checks that the notification is still valid (the caller not
   killed, its thread id not reused), runs it as the library does
   (as the caller, who.c: the system call; on EOPNOTSUPP or ENOSYS, for
   mode 0 the fallback, for other modes under --emulate the emulation,
   both in a process of their own: sv_apart), traces
   it, closes its copy and replies.  Closing the copy drops none of the
   caller's POSIX record locks: they belong to the caller's descriptor
   table, not to ours.  A call whose descriptor it cannot take for any
   reason but EBADF (no ptrace access, no descriptor left in this
   process) is left to the kernel.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "fa-policy.h"
#include "fa-seccomp.h"
#include "supervise.h"

/* The process (thread group) of thread TID, from /proc, or TID.  */
static pid_t
tgid_of (pid_t tid)
{
  char path[64], buf[512];
  int fd;
  ssize_t n;

  snprintf (path, sizeof path, "/proc/%ld/status", (long) tid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return tid;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return tid;
  buf[n] = '\0';
  char *p = strstr (buf, "\nTgid:");
  return p ? (pid_t) strtol (p + 6, NULL, 10) : tid;
}

/* Whether the caller of REQ still waits for our answer.  */
static int
valid (const struct seccomp_notif *req)
{
  __u64 id = req->id;

  return ioctl (listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* The caller's descriptor FD as one of ours, in *COPY: 0, an error
   number for the caller (EBADF: FD is not open there), or -1 if the
   caller no longer waits.  The thread's own descriptor table (Linux 6.9:
   a thread pidfd), else its process's.  The check after pidfd_getfd
   makes it the caller's: while the notification is valid the thread is
   alive, so its id was not reused meanwhile.  */
static int
take (const struct seccomp_notif *req, int fd, int *copy)
{
  int pidfd = (int) syscall (SYS_pidfd_open, req->pid, PIDFD_THREAD), err;

  *copy = -1;
  if (pidfd < 0 && errno == EINVAL)
    pidfd = (int) syscall (SYS_pidfd_open, tgid_of (req->pid), 0);
  if (pidfd < 0)
    return valid (req) ? errno : -1;
  *copy = (int) syscall (SYS_pidfd_getfd, pidfd, fd, 0);
  err = errno;
  close (pidfd);
  if (!valid (req))
    {
      if (*copy >= 0)
	close (*copy);
      *copy = -1;
      return -1;
    }
  return *copy < 0 ? err : 0;
}

/* One notification, answered.  */
void
sv_answer (const struct seccomp_notif *req)
{
  struct seccomp_notif_resp resp;
  int fd = -1, mode = 0, err, copy = -1, known, taken = 1;
  int64_t off = 0, len = 0;
  const char *how = "";

  known = fa_seccomp_args (&req->data, &fd, &mode, &off, &len);
  if (!known)
    err = ENOSYS;		/* not a call the filter sends: untraced */
  else if (__fa_policy.action == FA_NOOP || __fa_policy.action == FA_INJECT)
    err = __fa_answer (&__fa_policy, -1, mode, off, len, &how);
  else
    {
      struct sv_who who;
      struct sv_self self;

      /* Who the caller is, read before take finds it still waiting:
	 alive all along, its ID not another's.  Made as the caller, the
	 system call and the fill alike; where that cannot be, left to
	 the kernel, which makes it as the caller.  */
      int as = sv_privileged ();

      if (as)
	sv_identify (req->pid, &who);
      err = take (req, fd, &copy);
      if (err == 0 && as && (!who.known || sv_become (&who, &self) < 0))
	taken = 0;
      else if (err == 0)
	{
	  err = sv_apart (copy, mode, off, len, &how);
	  if (as)
	    sv_restore (&self);
	}
      else
	taken = err == EBADF;	/* the kernel's answer too: ours, traced */
      if (as)
	sv_forget (&who);
      if (err < 0)
	return;
    }
  if (copy >= 0)
    close (copy);
  memset (&resp, 0, sizeof resp);
  resp.id = req->id;
  /* The caller's descriptor not taken: no ptrace access to the caller
     (not dumpable, another user, and we without CAP_SYS_PTRACE), or no
     descriptor left in this process (EMFILE, ENFILE).  We cannot act
     for it, so the kernel makes the call as if we were not there (Linux
     5.5), rather than we answer with an error it would not give.  Its
     answer is not ours to trace.  An error of the policy (--errno=EPERM)
     is ours.  */
  if (!taken)
    {
      resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
      sv_pool_replying ();
      ioctl (listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
      return;
    }
  if (__fa_policy.trace.path[0] && known)
    __fa_trace (&__fa_policy.trace, tgid_of (req->pid), "fallocate", 0, fd,
		mode, off, len, err, how);
  resp.error = -err;
  sv_pool_replying ();
  /* ENOENT: the caller was killed, or interrupted, meanwhile.  */
  ioctl (listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}
