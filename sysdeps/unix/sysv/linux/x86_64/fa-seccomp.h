/* x86_64: what fallocate-supervise (supervise/) needs to know of the
   fallocate calls an x86_64 kernel can be asked for, by the ABIs it runs:
   the audit arch and number its seccomp filter matches, and where the
   arguments are in the struct seccomp_data of each.

   - x86_64: AUDIT_ARCH_X86_64, number 285 (fa-arch.h), one 64-bit
     argument per word.
   - x32: AUDIT_ARCH_X86_64 too, number 285 | __X32_SYSCALL_BIT
     (arch/x86/entry/syscalls/syscall_64.tbl: common), arguments as
     x86_64's.
   - i386 (a 32-bit program, or int $0x80 from a 64-bit one):
     AUDIT_ARCH_I386, number 324 (arch/x86/entry/syscalls/syscall_32.tbl,
     i386/fa-arch.h), entry ia32_fallocate (arch/x86/kernel/sys_ia32.c):
     fd, mode, then offset and len each as two 32-bit words, low first.  */
#ifndef FA_SECCOMP_H
#define FA_SECCOMP_H

#include <stdint.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include "fa-arch.h"

#define FA_SECCOMP_ARCH AUDIT_ARCH_X86_64
#define FA_SECCOMP_NR FA_NR_FALLOCATE
#define FA_SECCOMP_X32_NR (FA_NR_FALLOCATE | 0x40000000)
#define FA_SECCOMP_COMPAT_ARCH AUDIT_ARCH_I386
#define FA_SECCOMP_COMPAT_NR 324

/* The calls the filter sends to the supervisor, as { arch, nr } pairs.  */
#define FA_SECCOMP_CALLS \
  { FA_SECCOMP_ARCH, FA_SECCOMP_NR }, \
  { FA_SECCOMP_ARCH, FA_SECCOMP_X32_NR }, \
  { FA_SECCOMP_COMPAT_ARCH, FA_SECCOMP_COMPAT_NR }

/* fallocate's arguments in D, a call the filter sent (one of
   FA_SECCOMP_CALLS): 1, or 0 if D is none of them.  */
static inline int
fa_seccomp_args (const struct seccomp_data *d, int *fd, int *mode,
		 int64_t *off, int64_t *len)
{
  if (d->arch == FA_SECCOMP_ARCH
      && (d->nr == FA_SECCOMP_NR || d->nr == FA_SECCOMP_X32_NR))
    {
      *fd = (int) d->args[0];
      *mode = (int) d->args[1];
      *off = (int64_t) d->args[2];
      *len = (int64_t) d->args[3];
      return 1;
    }
  if (d->arch == FA_SECCOMP_COMPAT_ARCH && d->nr == FA_SECCOMP_COMPAT_NR)
    {
      *fd = (int) d->args[0];
      *mode = (int) d->args[1];
      *off = (int64_t) ((uint64_t) (uint32_t) d->args[3] << 32
			| (uint32_t) d->args[2]);
      *len = (int64_t) ((uint64_t) (uint32_t) d->args[5] << 32
			| (uint32_t) d->args[4]);
      return 1;
    }
  return 0;
}

#endif
