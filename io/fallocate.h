/* <fallocate.h>: the fallocate family of libfallocate.

   Declares the four functions exactly as glibc does (including the
   _FILE_OFFSET_BITS=64 redirection to the *64 names) and every fallocate
   mode of current Linux.  Each constant is guarded and spelled as in
   <linux/falloc.h>, so this header, <fcntl.h> and <linux/falloc.h> can be
   included together in any order.  */
#ifndef _FALLOCATE_H
#define _FALLOCATE_H 1

#include <sys/types.h>

/* Modes of fallocate (include/uapi/linux/falloc.h).  */
#ifndef FALLOC_FL_ALLOCATE_RANGE
# define FALLOC_FL_ALLOCATE_RANGE 0x00	/* allocate; extends the size */
#endif
#ifndef FALLOC_FL_KEEP_SIZE
# define FALLOC_FL_KEEP_SIZE 0x01	/* allocate; size unchanged */
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
# define FALLOC_FL_PUNCH_HOLE 0x02	/* deallocate; needs KEEP_SIZE */
#endif
/* FALLOC_FL_NO_HIDE_STALE is a reserved value, not a mode: the April
   2012 proposal to allocate without zeroing (exposing what the blocks
   held) was never merged.  The kernel refuses it with EOPNOTSUPP before
   any filesystem or block device sees it (vfs_fallocate: not in
   FALLOC_FL_SUPPORTED_MASK).  Defined because <linux/falloc.h> defines
   it.  */
#ifndef FALLOC_FL_NO_HIDE_STALE
# define FALLOC_FL_NO_HIDE_STALE 0x04	/* reserved, unmerged */
#endif
#ifndef FALLOC_FL_COLLAPSE_RANGE
# define FALLOC_FL_COLLAPSE_RANGE 0x08	/* remove a range, shift the rest down */
#endif
#ifndef FALLOC_FL_ZERO_RANGE
# define FALLOC_FL_ZERO_RANGE 0x10	/* zero a range, allocated */
#endif
#ifndef FALLOC_FL_INSERT_RANGE
# define FALLOC_FL_INSERT_RANGE 0x20	/* insert a hole, shift the rest up */
#endif
#ifndef FALLOC_FL_UNSHARE_RANGE
# define FALLOC_FL_UNSHARE_RANGE 0x40	/* unshare reflinked blocks */
#endif
/* FALLOC_FL_WRITE_ZEROES (Linux 6.17; on 6.1, kernel/'s patch 2 for
   ext4): the range reads zeros and is allocated as written extents, so
   later writes into it change no block mapping.  Not with KEEP_SIZE.  */
#ifndef FALLOC_FL_WRITE_ZEROES
# define FALLOC_FL_WRITE_ZEROES 0x80	/* zero by writing, no unwritten extents */
#endif

/* The names of the 2007 proposal (Amit Arora's fallocate patch set, TAKE5),
   where a Linux mode does exactly the same, only with
   _FALLOCATE_2007_SOURCE defined (they are outside the names a C library
   reserves for itself, and a program may use them for its own).  Not
   defined, because nothing
   in Linux does exactly what they proposed:
     FA_DEALLOCATE / FALLOC_DEALLOCATE   free blocks and shrink the size when
                                         they end the file (PUNCH_HOLE
                                         requires KEEP_SIZE)
     FALLOC_MKSWAP                       allocate without zeroing (tried
                                         again in 2012 as NO_HIDE_STALE,
                                         never merged: a reserved value)
     FALLOC_FL_ERR_FREE, FALLOC_FL_NO_MTIME, FALLOC_FL_NO_CTIME
     FALLOC_FL_DEALLOCATE, FALLOC_FL_DEL_DATA  (their bits are now
                                         PUNCH_HOLE and the reserved
                                         NO_HIDE_STALE)  */
#ifdef _FALLOCATE_2007_SOURCE
# define FA_ALLOCATE FALLOC_FL_ALLOCATE_RANGE
# define FA_RESV_SPACE FALLOC_FL_KEEP_SIZE
# define FA_UNRESV_SPACE (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)
# define FALLOC_ALLOCATE FA_ALLOCATE
# define FALLOC_RESV_SPACE FA_RESV_SPACE
# define FALLOC_UNRESV_SPACE FA_UNRESV_SPACE
# define FALLOC_ZERO_SPACE FALLOC_FL_ZERO_RANGE
#endif

/* The version of libfallocate this header is of, and the same as
   (major << 16) | (minor << 8) | patch, for #if.  */
#define LIBFALLOCATE_VERSION "0.1.0"
#define LIBFALLOCATE_VERSION_NUMBER 0x000100

#ifdef __cplusplus
extern "C" {
#endif

/* __FA_OFF64: the 64-bit offset type of the *64 names.  glibc's
   __off64_t; a C library without it (musl) has a 64-bit off_t on every
   ABI, whatever _FILE_OFFSET_BITS says, and no redirection to make (its
   <fcntl.h> may define fallocate64 and posix_fallocate64 as macros for
   the plain names: the declarations below then repeat those).  */
#ifdef __GLIBC__
# define __FA_OFF64 __off64_t
#else
# define __FA_OFF64 off_t
#endif

#if defined __GLIBC__ && defined _FILE_OFFSET_BITS && _FILE_OFFSET_BITS == 64
extern int fallocate (int __fd, int __mode, __FA_OFF64 __offset,
		      __FA_OFF64 __len) __asm__ ("fallocate64");
extern int posix_fallocate (int __fd, __FA_OFF64 __offset, __FA_OFF64 __len)
  __asm__ ("posix_fallocate64");
#else
extern int fallocate (int __fd, int __mode, off_t __offset, off_t __len);
extern int posix_fallocate (int __fd, off_t __offset, off_t __len);
#endif
extern int fallocate64 (int __fd, int __mode, __FA_OFF64 __offset,
			__FA_OFF64 __len);
extern int posix_fallocate64 (int __fd, __FA_OFF64 __offset,
			      __FA_OFF64 __len);

#ifdef __cplusplus
}
#endif

#endif /* fallocate.h */
