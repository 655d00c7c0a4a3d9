/* Internal interfaces of libfallocate.  Hidden in the shared library so
   that only the four public names are exported.  */
#ifndef FA_INTERNAL_H
#define FA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define FA_HIDDEN __attribute__ ((visibility ("hidden")))
/* Thread-local data of ours: in the static TLS block, so that no access
   calls __tls_get_addr, which in a library loaded by dlopen allocates
   (malloc) at a thread's first access: a signal handler interrupting
   malloc then waited for ever.  */
#define FA_TLS __thread __attribute__ ((tls_model ("initial-exec")))

/* The fallocate system call through the ABI's own stub: 0 or -errno.  */
FA_HIDDEN long __fa_syscall (int fd, int mode, int64_t offset, int64_t len);

/* fallocate's convention: 0, or -1 with errno set.  */
FA_HIDDEN int __fa_result (long ret);

/* posix_fallocate for 64-bit offset and len, fallocate-shim's policy
   applied (io/fa-posix.c): 0 or an error number; errno is left as it
   was.  */
FA_HIDDEN int __fa_posix (int fd, int64_t offset, int64_t len);

/* Nonzero when no policy and no trace is set (io/fa-policy.c): fallocate
   is the system call alone.  */
FA_HIDDEN extern int __fa_passthrough;

/* The fallocate system call as a program sees it, fallocate-shim's
   policy applied (io/fa-policy.c): 0 or -errno.  */
FA_HIDDEN long __fa_fallocate (int fd, int mode, int64_t offset, int64_t len);

/* fallocate: the system call, or it under the policy.  The test inline:
   the system call's path costs what glibc's does.  */
static inline long
__fa_call (int fd, int mode, int64_t offset, int64_t len)
{
  return __fa_passthrough ? __fa_syscall (fd, mode, offset, len)
			  : __fa_fallocate (fd, mode, offset, len);
}

/* A MODE the kernel or the filesystem refused with REFUSED (EOPNOTSUPP or
   ENOSYS), done by writing where its visible result can be had so: 0 or
   an error number, REFUSED for the modes that cannot.  May change
   errno.  */
FA_HIDDEN int __fa_emulate (int fd, int mode, int64_t offset, int64_t len,
			    int refused);

/* Allocation by writing zeros, for when the system call cannot do it:
   0 or an error number.  May change errno.  */
FA_HIDDEN int __fa_fill (int fd, int64_t offset, int64_t len);

#endif
