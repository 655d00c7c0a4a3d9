/* Internal interfaces of libfallocate.  Hidden in the shared library so
   that only the four public names are exported.  */
#ifndef FA_INTERNAL_H
#define FA_INTERNAL_H

#include <stdint.h>

#define FA_HIDDEN __attribute__ ((visibility ("hidden")))

/* The fallocate system call through the ABI's own stub: 0 or -errno.  */
FA_HIDDEN long __fa_syscall (int fd, int mode, int64_t offset, int64_t len);

/* fallocate's convention: 0, or -1 with errno set.  */
FA_HIDDEN int __fa_result (long ret);

/* posix_fallocate for 64-bit offset and len: 0 or an error number; errno
   is left as it was.  */
FA_HIDDEN int __fa_posix (int fd, int64_t offset, int64_t len);

/* Allocation by writing zeros, for when the system call cannot do it:
   0 or an error number.  May change errno.  */
FA_HIDDEN int __fa_fill (int fd, int64_t offset, int64_t len);

#endif
