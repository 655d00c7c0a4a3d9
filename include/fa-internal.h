/* Internal interfaces of libfallocate.  Hidden in the shared library so
   that only the four public names are exported.  */
#ifndef FA_INTERNAL_H
#define FA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define FA_HIDDEN __attribute__ ((visibility ("hidden")))

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

/* Helpers of the fallback (sysdeps/unix/sysv/linux/fa-fill.c) that the
   emulation shares.  The checks of vfs_fallocate for MODE, setting *FLAGS
   and *ST, and *SOLO if no descriptor of ours may be opened on the file
   (closing it would drop the process's record locks): 0 or an error
   number.  */
struct stat64;
FA_HIDDEN int __fa_check (int fd, int mode, int64_t offset, int64_t len,
			  int *flags, struct stat64 *st, int *solo);
/* Another descriptor for the file of FD, opened with FLAGS, or -1 (at
   once if SOLO).  */
FA_HIDDEN int __fa_reopen (int fd, int flags, const struct stat64 *st,
			   int solo);
/* The descriptor to pwrite through: one of our own where FD's FLAGS
   would get in the way (O_APPEND, O_DIRECT, O_SYNC, O_DSYNC, no
   O_LARGEFILE), else FD, also when none can be had.  */
FA_HIDDEN int __fa_writer (int fd, int flags, const struct stat64 *st,
			   int solo);
/* A descriptor to lseek on without moving FD's file offset: one of our
   own, or FD itself with its offset saved in *POS; __fa_unseek closes it
   or puts the offset back.  */
FA_HIDDEN int __fa_seeker (int fd, const struct stat64 *st, int solo,
			   int64_t *pos);
FA_HIDDEN void __fa_unseek (int fd, int rfd, int64_t pos);
/* What a caller's O_SYNC or O_DSYNC in FLAGS asks after writes that
   did not wait: 0 or an error number.  */
FA_HIDDEN int __fa_sync (int fd, int flags);
/* Whether END lies past the filesystem's largest file (EFBIG).  */
FA_HIDDEN int __fa_too_big (int rfd, int64_t end);
/* N zero bytes written at POS: 0 or an error number.  */
FA_HIDDEN int __fa_put_zeros (int fd, int64_t pos, size_t n);

#endif
