/* Who a supervised caller writes as (sv_identify), taken on by the
   thread that answers it and given back (sv_become, sv_restore).

   The supervisor, often root, fills for callers who are not: written
   with its identity, a setuid or setgid file kept the bits that the
   caller's own write (and ext4's fallocate) strip, which are kept only
   for a writer with CAP_FSETID or, for setgid, in the file's group; and
   ext4's own fallocate, made as root, kept them too, and gave root's
   reserved blocks.  So the thread that answers a call, for the system
   call and the fill alike (apart.c's child inherits it), takes on the
   caller's filesystem user and group IDs, its supplementary groups and
   its effective capabilities, all read from /proc/TID/status, whose IDs
   are shown as our user namespace sees them; credentials are per
   thread.  A supervisor without capabilities does none of this: no
   process under it can have more than it (no new privileges), and its
   writes are the caller's own.  Reading the status costs some 10 us a
   call (make bench 8a: a supervisor run as root misses its target).  Its capabilities count in its own user
   namespace only: a caller in another one (unshare -U) has none here.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include "supervise.h"

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

/* The whole of PATH, NUL-terminated, in memory of malloc's; NULL if it
   cannot be read.  A status file with 65536 groups is some 700 KiB.  */
static char *
slurp (const char *path)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  size_t size = 4096, have = 0;
  char *buf = NULL, *more;
  ssize_t n = 1;

  if (fd < 0)
    return NULL;
  while (n > 0 && (more = realloc (buf, size + 1)) != NULL)
    {
      buf = more;
      n = read (fd, buf + have, size - have);
      have += n > 0 ? (size_t) n : 0;
      if (have == size)
	size *= 2;
    }
  close (fd);
  if (n != 0)
    {
      free (buf);
      return NULL;
    }
  buf[have] = '\0';
  return buf;
}

/* The field after KEY ("\nUid:") in the status text S, or NULL.  */
static char *
field (char *s, const char *key)
{
  char *p = strstr (s, key);

  return p ? p + strlen (key) : NULL;
}

/* The fourth number of a Uid: or Gid: line (real, effective, saved,
   filesystem).  */
static unsigned
fourth (char *p)
{
  for (int i = 0; i < 3; i++)
    strtoul (p, &p, 10);
  return (unsigned) strtoul (p, NULL, 10);
}

/* Whether thread TID is in our user namespace.  */
static int
our_userns (pid_t tid)
{
  char path[64];
  struct stat64 a, b;

  snprintf (path, sizeof path, "/proc/%ld/ns/user", (long) tid);
  return stat64 (path, &a) < 0 || stat64 ("/proc/self/ns/user", &b) < 0
	 || (a.st_dev == b.st_dev && a.st_ino == b.st_ino);
}

int
sv_privileged (void)
{
  static int known, privileged;
  struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct d[2];

  if (!__atomic_load_n (&known, __ATOMIC_ACQUIRE))
    {
      privileged = syscall (SYS_capget, &h, d) < 0 || d[0].permitted
		   || d[1].permitted;
      __atomic_store_n (&known, 1, __ATOMIC_RELEASE);
    }
  return privileged;
}

void
sv_identify (pid_t tid, struct sv_who *w)
{
  char path[64], *buf, *u, *g, *gs, *c, *end;
  size_t n = 0;

  memset (w, 0, sizeof *w);
  snprintf (path, sizeof path, "/proc/%ld/status", (long) tid);
  buf = slurp (path);
  if (!buf)
    return;
  u = field (buf, "\nUid:");
  g = field (buf, "\nGid:");
  gs = field (buf, "\nGroups:");
  c = field (buf, "\nCapEff:");
  for (char *p = gs; p && *p != '\n' && *p; p++)
    n += *p == ' ' || *p == '\t';
  w->groups = malloc ((n + 1) * sizeof *w->groups);
  if (u && g && gs && c && w->groups)
    {
      w->fsuid = fourth (u);
      w->fsgid = fourth (g);
      for (;;)
	{
	  unsigned long v = strtoul (gs, &end, 10);
	  if (end == gs || (size_t) w->ngroups > n)
	    break;
	  w->groups[w->ngroups++] = (unsigned) v;
	  gs = end;
	}
      w->caps = our_userns (tid) ? strtoull (c, NULL, 16) : 0;
      w->known = 1;
    }
  free (buf);
}

void
sv_forget (struct sv_who *w)
{
  free (w->groups);
  w->groups = NULL;
}

/* Raw system calls, which change the calling thread alone: the C
   library's setgroups and capset change every thread it knows of.  */
static void
set (unsigned fsuid, unsigned fsgid, int ngroups, const unsigned *groups)
{
  syscall (SETGROUPS, ngroups, groups);
  syscall (SETFSGID, fsgid);
  syscall (SETFSUID, fsuid);
}

int
sv_become (const struct sv_who *w, struct sv_self *s)
{
  struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct d[2];
  long n;

  /* Ours, to come back to: the IDs (an ID of -1 changes nothing and
     gives the one set), the groups, the capabilities.  */
  s->fsuid = (unsigned) syscall (SETFSUID, -1);
  s->fsgid = (unsigned) syscall (SETFSGID, -1);
  n = syscall (SYS_getgroups, 0, NULL);
  s->groups = n > 0 ? malloc ((size_t) n * sizeof *s->groups) : NULL;
  s->ngroups = s->groups ? (int) syscall (SYS_getgroups, n, s->groups) : 0;
  if (s->ngroups < 0 || syscall (SYS_capget, &h, s->caps) < 0)
    {
      free (s->groups);
      s->groups = NULL;
      return -1;
    }
  memcpy (d, s->caps, sizeof d);
  d[0].effective &= (unsigned) w->caps;
  d[1].effective &= (unsigned) (w->caps >> 32);
  /* The caller is what we are (a supervisor run by the user it
     supervises): nothing to change, nor to change back.  */
  s->changed = w->fsuid != s->fsuid || w->fsgid != s->fsgid
	       || w->ngroups != s->ngroups
	       || (s->ngroups > 0
		   && memcmp (w->groups, s->groups,
			      (size_t) s->ngroups * sizeof *s->groups) != 0)
	       || memcmp (d, s->caps, sizeof d) != 0;
  if (s->changed)
    {
      set (w->fsuid, w->fsgid, w->ngroups, w->groups);
      syscall (SYS_capset, &h, d);
    }
  return 0;
}

void
sv_restore (struct sv_self *s)
{
  struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

  /* The capabilities first: setgroups needs CAP_SETGID.  */
  if (s->changed)
    {
      syscall (SYS_capset, &h, s->caps);
      set (s->fsuid, s->fsgid, s->ngroups, s->groups);
    }
  free (s->groups);
  s->groups = NULL;
}
