/* What the parts of fallocate-supervise share (supervise/).  Each
   part says at its top what it does and why:

     fallocate-supervise.c  main: the start, the checks, COMMAND's end
     filter.c               the filter, and the listener's hand-over
     pool.c                 the threads that wait for calls (the pool's
                            rule: when a thread starts, when a call waits)
     answer.c               one call answered
     apart.c                a call answered by writing, in a child
     who.c                  who that child writes as: the caller
     signals.c              COMMAND's process group, signals passed on,
                            job control, COMMAND's end as ours  */
#ifndef SUPERVISE_H
#define SUPERVISE_H

#include <signal.h>
#include <sys/time.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <linux/capability.h>
#include <linux/seccomp.h>

#ifndef PIDFD_THREAD
# define PIDFD_THREAD O_EXCL
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
# define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
# define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW (4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
# define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
# define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

#define ME "fallocate-shim: --supervise"
/* Set in COMMAND's environment: a supervisor answers its calls
   (sv_nested).  */
#define SUPERVISED "FALLOCATE_SHIM_SUPERVISED"
/* What the exit status says when COMMAND could not be run.  */
#define CANNOT 126

/* The seccomp listener (fallocate-supervise.c).  */
extern int listener;
/* RLIMIT_NOFILE as we were given it, COMMAND's (fallocate-supervise.c,
   which raises ours).  */
extern struct rlimit sv_nofile;

/* filter.c */
_Noreturn void sv_run (int sock, char **argv, const sigset_t *mask,
		       const struct sigaction *xfsz,
		       const struct sigaction *pipe, int group,
		       struct itimerval *timers);
int sv_receive (int sock, int *err);
int sv_nested (void);

/* pool.c */
int sv_pool_start (void);

/* answer.c */
void sv_answer (const struct seccomp_notif *req);
/* pool.c: the answering thread is about to reply.  */
void sv_pool_replying (void);

/* apart.c: once no call is being answered in a thread of ours (one in
   a process of its own finishes alone).  */
void sv_apart_quiet (void);
/* apart.c: the call through FD (a copy of the caller's descriptor),
   answered by a thread that has become the caller: 0 or an error
   number, and in *HOW what __fa_trace is told.  */
int sv_apart (int fd, int mode, int64_t off, int64_t len, const char **how);

/* who.c: who thread TID writes as (its groups in memory of malloc's,
   let go by sv_forget); the calling thread made to write so, and back
   (what it was in *S): sv_become 0, or -1 with nothing changed.  */
struct sv_who
{
  int known;			/* all of it read */
  unsigned fsuid, fsgid;
  int ngroups;
  unsigned *groups;
  unsigned long long caps;	/* CapEff, or 0 in another user namespace */
};
/* Whether we have any capability: only then is the caller taken on.  */
int sv_privileged (void);
void sv_identify (pid_t tid, struct sv_who *w);
void sv_forget (struct sv_who *w);
struct sv_self
{
  int changed;			/* sv_become changed anything */
  unsigned fsuid, fsgid;
  int ngroups;
  unsigned *groups;
  struct __user_cap_data_struct caps[2];
};
int sv_become (const struct sv_who *w, struct sv_self *s);
void sv_restore (struct sv_self *s);

/* signals.c */
int sv_own_group (void);
void sv_hold (const sigset_t *mask);
void sv_anchor (pid_t group);
void sv_unanchor (void);
void sv_forward (pid_t pid, int group);
int sv_wait (pid_t pid, int pidfd);
_Noreturn void sv_finish (int status);
void sv_block (const sigset_t *keep);
void sv_timers (struct itimerval *t, int give);
_Noreturn void sv_end (int status);

#endif
