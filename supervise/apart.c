/* A call answered by writing, in a process of its own (sv_apart).

   A fill faults the file's pages in through a mapping, and a fault that
   blocks (a frozen filesystem, a stopped FUSE server) holds its
   process's memory-map lock: the next mmap of any thread of the
   process waits behind it, and every page fault after that, which in
   the supervisor was every call.  So a call that the kernel refuses and
   that the policy answers by writing (the fallback of a mode-0 call,
   the emulation) is answered in a child made with clone: its memory is
   its own, and a fill stuck there holds up that call alone.  The child
   shares our descriptor table (CLONE_FILES): it closes nothing when it
   ends, so no FUSE server sees a FLUSH of ours, and it uses the copy of
   the caller's descriptor that we took.  Its exit signal is none, so
   that only a wait for clone children reaps it, never sv_wait's for
   COMMAND.  The file's turn is taken here, around the child: two
   children never fill one file at once.  Where no child can be had (a
   pids cgroup, RLIMIT_NPROC, no memory), the call is answered in this
   thread.

   The child writes as the caller would: with its filesystem user and
   group IDs, its supplementary groups (up to GROUPS of them) and no
   capability it lacks.  Written by root, a setuid or setgid file kept
   the bits that the caller's own write, and ext4's fallocate, strip
   (they are kept only with CAP_FSETID, or for setgid, in the file's
   group).  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fa-file.h"
#include "fa-policy.h"
#include "supervise.h"
#include <linux/capability.h>

/* 32-bit IDs where the system call has both sizes (i386, arm).  */
#ifdef SYS_setgroups32
# define SETGROUPS SYS_setgroups32
# define SETFSUID SYS_setfsuid32
# define SETFSGID SYS_setfsgid32
#else
# define SETGROUPS SYS_setgroups
# define SETFSUID SYS_setfsuid
# define SETFSGID SYS_setfsgid
#endif

#define GROUPS 4096

/* Who the caller writes as (/proc/TID/status).  */
struct who
{
  int known;			/* all of it read */
  unsigned fsuid, fsgid;
  int ngroups;			/* -1: more than GROUPS, left as ours */
  unsigned groups[GROUPS];
  unsigned long long caps;	/* CapEff */
};

/* The child's stack, and the call and its answer below it, in memory
   the child shares with us.  */
#define AREA (256 << 10)

struct job
{
  int fd, mode;
  int64_t off, len;
  int err;
  const char *how;		/* a string of ours: at the same address in
				   the child, a copy of us */
  struct who who;
};

/* The field after KEY ("\nUid:") in the status text S, or NULL.  */
static const char *
field (const char *s, const char *key)
{
  const char *p = strstr (s, key);

  return p ? p + strlen (key) : NULL;
}

/* *W for thread TID.  */
static void
identify (pid_t tid, struct who *w)
{
  char path[64], buf[32 << 10];
  const char *u, *g, *gs, *c;
  char *end;
  int fd;
  ssize_t n;

  w->known = 0;
  snprintf (path, sizeof path, "/proc/%ld/status", (long) tid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  buf[n > 0 ? n : 0] = '\0';
  u = field (buf, "\nUid:");
  g = field (buf, "\nGid:");
  gs = field (buf, "\nGroups:");
  c = field (buf, "\nCapEff:");
  if (!u || !g || !gs || !c)
    return;
  /* Real, effective, saved, filesystem: the fourth.  */
  for (int i = 0; i < 3; i++)
    {
      strtoul (u, &end, 10);
      u = end;
      strtoul (g, &end, 10);
      g = end;
    }
  w->fsuid = (unsigned) strtoul (u, NULL, 10);
  w->fsgid = (unsigned) strtoul (g, NULL, 10);
  w->ngroups = 0;
  for (;;)
    {
      unsigned long v = strtoul (gs, &end, 10);
      if (end == gs)
	break;
      if (w->ngroups == GROUPS)
	{
	  w->ngroups = -1;
	  break;
	}
      w->groups[w->ngroups++] = (unsigned) v;
      gs = end;
    }
  w->caps = strtoull (c, NULL, 16);
  w->known = 1;
}

/* This process made to write as W says.  Raw system calls: the C
   library's setgroups signals every thread it knows of, which in this
   child are its parent's.  */
static void
become (const struct who *w)
{
  struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct d[2];

  if (!w->known)
    return;
  if (w->ngroups >= 0)
    syscall (SETGROUPS, w->ngroups, w->groups);
  syscall (SETFSGID, w->fsgid);
  syscall (SETFSUID, w->fsuid);
  if (syscall (SYS_capget, &h, d) == 0)
    {
      d[0].effective &= (unsigned) w->caps;
      d[1].effective &= (unsigned) (w->caps >> 32);
      syscall (SYS_capset, &h, d);
    }
}

static int
child (void *arg)
{
  struct job *j = arg;

  become (&j->who);
  j->err = __fa_answer (&__fa_policy, j->fd, j->mode, j->off, j->len,
			&j->how);
  return 0;
}

int
sv_apart (pid_t caller, int fd, int mode, int64_t off, int64_t len,
	  const char **how)
{
  struct fa_file f;
  struct job *j;
  int err = (int) -__fa_syscall (fd, mode, off, len), st;

  *how = "";
  if ((err != EOPNOTSUPP && err != ENOSYS)
      || (mode != 0 && __fa_policy.action != FA_EMULATE))
    return err;
  memset (&f, 0, sizeof f);
  if (fstat64 (fd, &f.st) < 0)
    return errno;
  j = mmap (NULL, AREA, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	    -1, 0);
  if (j == MAP_FAILED)
    return __fa_answer (&__fa_policy, fd, mode, off, len, how);
  j->fd = fd;
  j->mode = mode;
  j->off = off;
  j->len = len;
  j->err = EIO;
  j->how = "";
  identify (caller, &j->who);
  __fa_lock (&f);
  pid_t pid = clone (child, (char *) j + AREA, CLONE_FILES, j);
  if (pid < 0)
    j->err = __fa_answer (&__fa_policy, fd, mode, off, len, &j->how);
  else
    while (waitpid (pid, &st, __WCLONE) < 0 && errno == EINTR)
      ;
  __fa_unlock (&f);
  /* A child killed (the OOM killer) answered nothing: EIO.  */
  err = j->err;
  *how = j->how;
  munmap (j, AREA);
  return err;
}
