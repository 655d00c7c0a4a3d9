/* fa-without seccomp|pidfd_getfd COMMAND [ARGS...]: run COMMAND as on a
   kernel without seccomp user notification (seccomp(2) fails with
   EINVAL, as it does for an unknown flag) or without pidfd_getfd (it
   fails with ENOSYS), for tests of fallocate-shim --supervise.  x86_64
   numbers; the filter is inherited across exec.  */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

int
main (int argc, char **argv)
{
  unsigned nr, err;

  if (argc < 3)
    {
      fprintf (stderr, "usage: fa-without seccomp|pidfd_getfd COMMAND [ARGS...]\n");
      return 2;
    }
  if (strcmp (argv[1], "seccomp") == 0)
    nr = SYS_seccomp, err = EINVAL;
  else if (strcmp (argv[1], "pidfd_getfd") == 0)
    nr = SYS_pidfd_getfd, err = ENOSYS;
  else
    {
      fprintf (stderr, "fa-without: %s: not seccomp or pidfd_getfd\n", argv[1]);
      return 2;
    }
  struct sock_filter prog[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | err),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog fprog = { sizeof prog / sizeof prog[0], prog };

  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
      || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) < 0)
    {
      perror ("fa-without: prctl");
      return 126;
    }
  execvp (argv[2], argv + 2);
  fprintf (stderr, "fa-without: %s: %s\n", argv[2], strerror (errno));
  return 127;
}
