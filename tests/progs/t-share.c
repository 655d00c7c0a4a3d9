/* t-share DIR: posix_fallocate's fallback and the rest of a process that
   shares the descriptor and the file (run under fa-seccomp, so that the
   fallback runs):
   - offset: another thread's write(2) records land where the shared file
     offset says, while posix_fallocate walks holes; plain, with a record
     lock held, and after the main thread has called pthread_exit
     (/proc/self/fd is gone then);
   - lock: a record lock another thread takes while the fallback runs is
     still held when it returns (closing any descriptor of the file would
     drop it);
   - twice: two threads allocating the same range leave the file exactly
     as long as the range;
   - inotify: the fallback opens and closes nothing a watcher sees;
   - memfd: a write-sealed memfd gets the kernel's answers; a
     write-sealed hugetlb memfd EINVAL (hugetlbfs takes no write(2)).  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fallocate.h>
#include "tcheck.h"

#define NREC 20000
#define REC 16
#define SPAN (8 << 20)		/* sparse region the fallback walks */
#define BASE ((int64_t) 64 << 20)	/* where the records go */

static const char *dir;
static int fd;
static atomic_int go, stop;

/* A file of SPAN bytes with one byte of data every 8 KiB: 1024 holes.  */
static int
sparse (const char *name, char *path, size_t size)
{
  int f = t_create (dir, name, path, size);

  for (int64_t at = 0; at < SPAN; at += 8192)
    if (pwrite64 (f, "x", 1, at) != 1)
      return -1;
  return f;
}

static void *
records (void *arg)
{
  char r[REC];

  (void) arg;
  while (!atomic_load (&go))
    ;
  for (int i = 0; i < NREC; i++)
    {
      snprintf (r, sizeof r, "%015d", i);
      if (write (fd, r, REC) != REC)
	return (void *) 1;
    }
  atomic_store (&stop, 1);
  return NULL;
}

/* Records not where write(2) must have put them.  */
static long
misplaced (void)
{
  char r[REC], want[REC];
  long n = 0;

  for (int i = 0; i < NREC; i++)
    {
      snprintf (want, sizeof want, "%015d", i);
      n += pread64 (fd, r, REC, BASE + (int64_t) i * REC) != REC
	   || memcmp (r, want, REC) != 0;
    }
  return n;
}

/* The fallback walking holes, 256 KiB at a time, until the records are
   written: nonzero if any call failed.  */
static int
walk (void)
{
  int bad = 0;

  atomic_store (&go, 1);
  for (int64_t at = 0; !atomic_load (&stop); at = (at + 262144) % SPAN)
    bad |= posix_fallocate64 (fd, at, 262144) != 0;
  return bad;
}

/* The offset test; 0 if every record is in place.  */
static long
offset_round (int locked)
{
  char path[4096];
  pthread_t t;
  struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
		      .l_start = 0, .l_len = 1 };

  fd = sparse ("offset", path, sizeof path);
  if (fd < 0 || lseek64 (fd, BASE, SEEK_SET) != BASE
      || (locked && fcntl (fd, F_SETLK, &lk) < 0))
    return -1;
  atomic_store (&go, 0);
  atomic_store (&stop, 0);
  pthread_create (&t, NULL, records, NULL);
  int bad = walk ();
  void *ret;
  pthread_join (t, &ret);
  long n = bad || ret ? -1 : misplaced ();
  close (fd);
  unlink (path);
  return n;
}

static void *
after_exit (void *arg)
{
  (void) arg;
  usleep (10000);		/* the main thread is gone by then */
  exit (offset_round (0) == 0 ? 0 : 1);
}

static void
offset (void)
{
  long n = offset_round (0);
  t_ok (n == 0, "offset: another thread's write(2) records in place "
	"(%ld of %d misplaced)", n, NREC);
  n = offset_round (1);
  t_ok (n == 0, "offset, record lock held: records in place (%ld of %d "
	"misplaced)", n, NREC);
  pid_t pid = fork ();
  if (pid == 0)
    {
      pthread_t t;
      pthread_create (&t, NULL, after_exit, NULL);
      pthread_exit (NULL);
    }
  int st;
  waitpid (pid, &st, 0);
  t_ok (WIFEXITED (st) && WEXITSTATUS (st) == 0,
	"offset, after the main thread's pthread_exit: records in place");
}

static char lock_path[4096];

/* Whether another process sees our write lock on byte 0 of the file.  */
static int
lock_seen (void)
{
  pid_t pid = fork ();
  int st;

  if (pid == 0)
    {
      struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			  .l_start = 0, .l_len = 1 };
      int f = open (lock_path, O_RDONLY);
      _exit (f >= 0 && fcntl (f, F_GETLK, &lk) == 0
	     && lk.l_type == F_WRLCK && lk.l_pid == getppid () ? 0 : 1);
    }
  waitpid (pid, &st, 0);
  return WIFEXITED (st) && WEXITSTATUS (st) == 0;
}

static void *
locker (void *arg)
{
  struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
		      .l_start = 0, .l_len = 1 };
  struct timespec ms = { 0, 1000000 };

  (void) arg;
  while (!atomic_load (&go))
    ;
  nanosleep (&ms, NULL);
  return (void *) (intptr_t) (fcntl (fd, F_SETLK, &lk) == 0);
}

static void
lock (void)
{
  pthread_t t;
  void *took;

  fd = t_create (dir, "lock", lock_path, sizeof lock_path);
  if (pwrite64 (fd, "x", 1, 0) != 1)
    t_ok (0, "lock: write");
  atomic_store (&go, 0);
  pthread_create (&t, NULL, locker, NULL);
  atomic_store (&go, 1);
  int r = posix_fallocate64 (fd, 0, 24 << 20);
  pthread_join (t, &took);
  t_ok (r == 0 && took && lock_seen (),
	"lock: a record lock taken during the fallback is still held "
	"(returned %d, taken %d)", r, took != NULL);
  close (fd);
  unlink (lock_path);
}

static int64_t same_len;

static void *
allocate (void *arg)
{
  (void) arg;
  while (!atomic_load (&go))
    ;
  return (void *) (intptr_t) posix_fallocate64 (fd, 0, same_len);
}

static void
twice (void)
{
  char path[4096];
  int over = 0, bad = 0;

  same_len = 16 << 20;
  for (int round = 0; round < 10; round++)
    {
      pthread_t a, b;
      void *ra, *rb;

      fd = t_create (dir, "twice", path, sizeof path);
      atomic_store (&go, 0);
      pthread_create (&a, NULL, allocate, NULL);
      pthread_create (&b, NULL, allocate, NULL);
      atomic_store (&go, 1);
      pthread_join (a, &ra);
      pthread_join (b, &rb);
      bad += ra != NULL || rb != NULL;
      over += t_size (fd) != same_len || !t_zero (fd, 0, (size_t) same_len);
      close (fd);
      unlink (path);
    }
  t_ok (bad == 0 && over == 0, "twice: two threads allocating the same "
	"16 MiB leave the file 16 MiB of zeros (%d rounds failed, %d wrong "
	"size)", bad, over);
}

static void
watched (void)
{
  char path[4096], buf[4096];
  int in = inotify_init1 (IN_NONBLOCK), opens = 0;

  fd = sparse ("watched", path, sizeof path);
  if (in < 0 || fd < 0
      || inotify_add_watch (in, path, IN_OPEN | IN_CLOSE) < 0)
    {
      t_unsupported ("inotify: %s", strerror (errno));
      return;
    }
  int r = posix_fallocate64 (fd, 0, SPAN + 65536);
  ssize_t n;
  while ((n = read (in, buf, sizeof buf)) > 0)
    for (char *p = buf; p < buf + n;)
      {
	struct inotify_event *e = (struct inotify_event *) p;
	opens++;
	p += sizeof *e + e->len;
      }
  t_ok (r == 0 && opens == 0, "inotify: no IN_OPEN or IN_CLOSE events "
	"(returned %d, %d events)", r, opens);
  close (in);
  close (fd);
  unlink (path);
}

static void
memfd (void)
{
  int m = memfd_create ("t-share", MFD_ALLOW_SEALING);

  if (m < 0)
    {
      t_unsupported ("memfd: %s", strerror (errno));
      return;
    }
  t_put (m, 0, 8192, 40);
  /* A hole within the size, which the kernel allocates without writing.  */
  int r = ftruncate (m, 16384) | fcntl (m, F_ADD_SEALS, F_SEAL_WRITE);
  int within = posix_fallocate64 (m, 0, 16384);
  int past = posix_fallocate64 (m, 4096, 16384);
  t_ok (r == 0 && within == 0 && t_same (m, 0, 8192, 40),
	"memfd F_SEAL_WRITE: a hole within the size 0, bytes unchanged "
	"(got %d)",
	within);
  t_ok (past == 0 && t_size (m) == 20480 && t_same (m, 0, 8192, 40),
	"memfd F_SEAL_WRITE: past the size 0 and size grown (got %d, size "
	"%lld)", past, (long long) t_size (m));
  r = fcntl (m, F_ADD_SEALS, F_SEAL_GROW);
  past = posix_fallocate64 (m, 16384, 8192);
  t_ok (r == 0 && past == EPERM && t_size (m) == 20480,
	"memfd F_SEAL_GROW: past the size EPERM (got %d)", past);
  close (m);
  /* On hugetlbfs nothing can allocate once writes are sealed: EINVAL,
     the size unchanged (0 and a size past what was reserved, before).  */
  m = memfd_create ("t-share-huge", MFD_HUGETLB | MFD_ALLOW_SEALING);
  if (m < 0)
    {
      t_unsupported ("hugetlb memfd: %s", strerror (errno));
      return;
    }
  r = ftruncate (m, 2 << 20) | fcntl (m, F_ADD_SEALS, F_SEAL_WRITE);
  past = posix_fallocate64 (m, 0, 4 << 20);
  t_ok (r == 0 && past == EINVAL && t_size (m) == 2 << 20,
	"hugetlb memfd F_SEAL_WRITE: EINVAL, size unchanged (got %d, size "
	"%lld)", past, (long long) t_size (m));
  close (m);
}

int
main (int argc, char **argv)
{
  dir = argc > 1 ? argv[1] : ".";
  if (!t_filtered ())
    {
      t_unsupported ("t-share: run it under fa-seccomp");
      return 0;
    }
  offset ();
  lock ();
  twice ();
  watched ();
  memfd ();
  return t_done ();
}
