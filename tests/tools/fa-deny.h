/* Make the fallocate system call fail with ERR in this process and every
   process it forks or execs, without privilege.  */
#ifndef FA_DENY_H
#define FA_DENY_H

/* 0, or -1 with errno set.  */
int fa_deny_fallocate (unsigned int err);

/* pidfd_getfd refused with EPERM (a container's profile without
   CAP_SYS_PTRACE).  0, or -1 with errno.  */
int fa_deny_pidfd_getfd (void);

/* A container's seccomp profile (Docker's): unshare fails with EPERM,
   and clone3 with CLONE3 if it is not 0.  0, or -1 with errno.  */
int fa_deny_container (int clone3);

#endif
