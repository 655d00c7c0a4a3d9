/* A seccomp filter that answers ERR to fallocate, for x86_64, x32 and
   i386 callers alike, and lets every other system call through.  It also
   catches the calls qemu-user makes on behalf of a guest.  */
#include <errno.h>
#include <stddef.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include "fa-deny.h"

#define NR_X86_64 285
#define NR_I386 324
#define X32_BIT 0x40000000

/* PROG's N instructions installed, without privilege: 0 or -1.  */
static int
install (struct sock_filter *prog, unsigned short n)
{
  struct sock_fprog fprog = { n, prog };

  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
      || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) < 0)
    return -1;
  return 0;
}

int
fa_deny_fallocate (unsigned int err)
{
  struct sock_filter prog[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 4),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, NR_X86_64, 5, 0),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, NR_X86_64 | X32_BIT, 4, 0),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 0, 3),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, NR_I386, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | err),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  return install (prog, sizeof prog / sizeof prog[0]);
}

#define NR_PIDFD_GETFD 438

/* pidfd_getfd refused with EPERM, as by Docker's default profile without
   CAP_SYS_PTRACE.  x86_64 callers.  */
int
fa_deny_pidfd_getfd (void)
{
  struct sock_filter prog[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, NR_PIDFD_GETFD, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  return install (prog, sizeof prog / sizeof prog[0]);
}

#define NR_UNSHARE 272
#define NR_CLONE3 435

/* What Docker's default profile does that the fallback meets: unshare
   refused without CAP_SYS_ADMIN (EPERM) and, if CLONE3 is not 0, clone3
   answered with it (ENOSYS today: C libraries then fall back on clone;
   EPERM in older profiles).  x86_64 callers.  */
int
fa_deny_container (int clone3)
{
  struct sock_filter prog[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 5),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, NR_UNSHARE, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K,
	      clone3 ? NR_CLONE3 : NR_UNSHARE, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (clone3 & 0xfff)),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  return install (prog, sizeof prog / sizeof prog[0]);
}
