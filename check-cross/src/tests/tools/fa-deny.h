/* Make the fallocate system call fail with ERR in this process and every
   process it forks or execs, without privilege.  */
#ifndef FA_DENY_H
#define FA_DENY_H

/* 0, or -1 with errno set.  */
int fa_deny_fallocate (unsigned int err);

#endif
