/* fa-seccomp ERRNO COMMAND [ARGS...]: run COMMAND where the fallocate
   system call fails with ERRNO (ENOSYS: a kernel or sandbox without it;
   EOPNOTSUPP: a filesystem without it).  The filter is inherited across
   exec and fork, needs no privilege, and also catches the calls qemu-user
   makes on behalf of a guest.  */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>

#define NR_X86_64 285
#define NR_I386 324
#define X32_BIT 0x40000000

int
main (int argc, char **argv)
{
  unsigned int err;

  if (argc < 3)
    {
      fprintf (stderr, "usage: fa-seccomp ENOSYS|EOPNOTSUPP COMMAND [ARGS...]\n");
      return 2;
    }
  if (strcmp (argv[1], "ENOSYS") == 0)
    err = ENOSYS;
  else if (strcmp (argv[1], "EOPNOTSUPP") == 0)
    err = EOPNOTSUPP;
  else
    {
      fprintf (stderr, "fa-seccomp: unknown errno %s\n", argv[1]);
      return 2;
    }

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
  struct sock_fprog fprog = { sizeof prog / sizeof prog[0], prog };

  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
      || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) < 0)
    {
      perror ("fa-seccomp: prctl");
      return 126;
    }
  execvp (argv[2], argv + 2);
  fprintf (stderr, "fa-seccomp: %s: %s\n", argv[2], strerror (errno));
  return 127;
}
