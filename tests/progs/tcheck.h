/* Helpers for the conformance programs.  Each program prints one line per
   assertion, "PASS: name", "FAIL: name (why)" or "UNSUPPORTED: name
   (why)", and exits 1 if anything failed: plain output that DejaGnu, a VM
   console or qemu-user can all read.  */
#ifndef TCHECK_H
#define TCHECK_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

/* Values whose 32-bit halves differ, so that a wrong register split of
   offset or len changes the result.  */
#define HI_OFF ((int64_t) 0x100003000LL)	/* 4 GiB + 12 KiB */
#define HI_LEN ((int64_t) 0x100020000LL)	/* 4 GiB + 128 KiB */
#define SMALL_LEN ((int64_t) 0x20000)

extern int t_failures;
void t_ok (int cond, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));
void t_unsupported (const char *fmt, ...)
  __attribute__ ((format (printf, 1, 2)));
int t_done (void);

/* The errno fallocate gets from the kernel right now: 0 when the system
   call is there, ENOSYS or EOPNOTSUPP under fa-seccomp.  */
int t_filtered (void);

/* Nonzero under make check-valgrind (FA_VALGRIND set): valgrind answers
   a negative descriptor with EBADF itself, before any seccomp filter.  */
int t_valgrind (void);
/* The number after KEY at the start of a line of the file PATH
   ("/proc/self/io", "write_bytes: "), or -1.  */
long long t_proc_field (const char *path, const char *key);

/* FN run in a thread whose cancellation is pending (deferred): 1 if FN
   returned (the thread then cancelled at pthread_testcancel), 0 if it
   was cancelled inside FN.  */
int t_cancel_pending (void (*fn) (void));
/* 1 if built with ASan, which cannot follow a cancellation's unwinding:
   the frames it skips stay poisoned and the thread's end then reports a
   stack-buffer-overflow (google/sanitizers issue 1399); a test expecting
   a cancellation inside a call is then unsupported.  */
int t_asan (void);

/* A new empty file DIR/NAME, open O_RDWR.  */
int t_create (const char *dir, const char *name, char *path, size_t size);
/* A new empty file in DIR whose inode number is FD's modulo 16 (calls
   on the two shared a lock when turns were stripes of inode numbers),
   its name in PATH, open O_RDWR; -1 if none came in 256 tries.  */
int t_sibling (const char *dir, int fd, char *path, size_t size);

/* Deterministic non-zero bytes: byte I of pattern SEED.  */
unsigned char t_byte (unsigned seed, int64_t i);
/* Write LEN pattern bytes at OFF; check that they read back unchanged.  */
void t_put (int fd, int64_t off, size_t len, unsigned seed);
int t_same (int fd, int64_t off, size_t len, unsigned seed);
/* Nonzero if [OFF, OFF+LEN) reads as zeros.  */
int t_zero (int fd, int64_t off, size_t len);

/* Bytes allocated to the file (st_blocks * 512) and its size.  */
int64_t t_alloc (int fd);
int64_t t_size (int fd);
/* Nonzero if [OFF, OFF+LEN) contains no hole per SEEK_HOLE.  */
int t_nohole (int fd, int64_t off, int64_t len);
/* Inode flag FLAG (FS_APPEND_FL, FS_IMMUTABLE_FL) set or cleared: 0 or
   an errno.  */
int t_attr (int fd, int flag, int on);

#endif
