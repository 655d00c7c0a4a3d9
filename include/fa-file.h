/* Internal interfaces of the fallback's descriptor layer; needs
   _GNU_SOURCE (struct stat64) before any system header.  */
#ifndef FA_FILE_H
#define FA_FILE_H

#include "fa-internal.h"
/* The descriptor layer of the fallback and the emulation
   (sysdeps/unix/sysv/linux/: fa-file.c the checks and what is learnt
   about the file, fa-lock.c the turns calls take, fa-holes.c finding
   holes, fa-own.c the descriptor of our own): they work through the caller's
   descriptor, never move its offset, never open one of their own in the
   caller's descriptor table.  Each returns 0 or an error number unless
   said otherwise.  */
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/fiemap.h>

#define FA_TMPFS 0x01021994	/* statfs f_type */
#define FA_BTRFS 0x9123683e	/* statfs f_type */
/* struct fa_file's kind: a filesystem with storage here; a network
   filesystem or FUSE (pages written back to another machine); one
   without storage (proc, sysfs: a write acts on memory).  */
enum { FA_LOCAL, FA_REMOTE, FA_PSEUDO };
#define FA_CHUNK (1 << 20)	/* the largest write of zeros */

#define FA_EXTENTS 16
struct fa_extents
{
  struct fiemap m;
  struct fiemap_extent e[FA_EXTENTS];
};

struct fa_file
{
  int fd;			/* the descriptor written through */
  int flags;			/* its F_GETFL */
  int seek;			/* a descriptor of our own to lseek, or -1 */
  int own;			/* in __fa_own's thread, fd its own */
  int fiemap;			/* FIEMAP answers on the file; -1 not asked */
  unsigned gen;			/* calls finished before the check */
  void *turn;			/* the turn __fa_lock took, or NULL */
  int self;			/* its holder's thread ID */
  unsigned token;		/* the process's token when it was taken */
  struct fa_extents fm;		/* the last FIEMAP reply, which describes */
  int64_t fm_from, fm_to;	/* [fm_from, fm_to) */
  int seals;			/* F_GET_SEALS of a memfd, else 0 */
  int wrote;			/* a write of ours landed (__fa_busy) */
  uint64_t mnt;			/* the mount's unique ID, or 0 */
  int kind;			/* FA_LOCAL, FA_REMOTE or FA_PSEUDO: fs's
				   filesystem, by its type (fa-file.c) */
  struct stat64 st;
  struct statfs64 fs;
};


/* The checks of vfs_fallocate for MODE, filling F.  */
FA_HIDDEN int __fa_check (int fd, int mode, int64_t offset, int64_t len,
			  struct fa_file *f);
/* ETXTBSY if F's file is an active swap file and nothing of ours could
   be written to it, else ERR.  */
FA_HIDDEN int __fa_busy (const struct fa_file *f, int err);
/* Nonzero if F is sealed against every write (F_SEAL_WRITE).  */
FA_HIDDEN int __fa_unwritable (const struct fa_file *f);
/* Calls on the same file take turns.  */
FA_HIDDEN void __fa_lock (struct fa_file *f);
FA_HIDDEN void __fa_unlock (struct fa_file *f);
/* Nonzero if calls of ours may have changed the file since F's check.  */
FA_HIDDEN int __fa_stale (const struct fa_file *f);
/* How many calls have finished (__fa_unlock), as __fa_stale compares.  */
FA_HIDDEN unsigned __fa_generation (void);
/* What a caller's O_SYNC or O_DSYNC asks after writes that did not wait.  */
FA_HIDDEN int __fa_sync (const struct fa_file *f);
/* EFBIG if END lies past the filesystem's largest file.  */
FA_HIDDEN int __fa_too_big (struct fa_file *f, int64_t end);
/* Whether holes can be found in F's file.  */
FA_HIDDEN int __fa_holes_known (struct fa_file *f);
/* Where holes cannot be found: whether F's filesystem cannot hold any.  */
FA_HIDDEN int __fa_solid (const struct fa_file *f);
/* N zero bytes written at POS (not through O_APPEND), *DONE of them.  */
FA_HIDDEN int __fa_write_zeros (struct fa_file *f, int64_t pos, size_t n,
				size_t *done);
/* The first hole of [*FROM, *TO), as [*FROM, *TO): 1, 0 if none, -1 if
   neither FIEMAP nor a descriptor of our own can tell.  */
FA_HIDDEN int __fa_next_hole (struct fa_file *f, int64_t *from,
			      int64_t *to);
/* Forget the FIEMAP reply __fa_next_hole keeps.  */
FA_HIDDEN void __fa_forget (struct fa_file *f);
/* Whether the byte at AT is in a hole right now: 1, 0, -1 and errno.  */
FA_HIDDEN int __fa_in_hole (struct fa_file *f, int64_t at);
/* Every signal sigfillset names blocked in this thread, the mask before
   in *OLD; and that mask put back.  By rt_sigprocmask: the C library's
   own sigprocmask would unblock its internal signals (glibc's 32 and
   33), blocked where a caller blocked them (fallocate-shim's supervisor
   does, so that its in-thread fills are not cut by them).  */
FA_HIDDEN void __fa_sigblock (sigset_t *old);
FA_HIDDEN void __fa_sigrestore (const sigset_t *old);
/* FN (ARG) in a thread whose descriptor table is its own:
   FN's result, EBADF or ENOMEM if none can be had.  */
FA_HIDDEN int __fa_aside (int (*fn) (void *), void *arg);
/* A file read line by line without stdio (fa-aside.c).  */
struct fa_lines
{
  int fd;
  size_t len, pos;
  char buf[4096];
};
FA_HIDDEN int __fa_lines_open (struct fa_lines *l, const char *path);
FA_HIDDEN int __fa_line (struct fa_lines *l, char *line, size_t max);
/* Answers kept per mount: 1 or 0, -1 if none is kept for MNT.  */
#define FA_MOUNTS 16
FA_HIDDEN int __fa_mount_answer (const uint64_t words[FA_MOUNTS],
				 uint64_t mnt);
FA_HIDDEN void __fa_mount_keep (uint64_t words[FA_MOUNTS], uint64_t mnt,
				int answer);
/* FN (ARG) run with F's descriptor one of our own, in a thread whose
   descriptor table is its own: FN's result, or EBADF if none can be
   opened.  */
FA_HIDDEN int __fa_own (struct fa_file *f, int (*fn) (void *), void *arg);

#endif
