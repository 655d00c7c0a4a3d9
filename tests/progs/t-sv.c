/* t-sv: a program that LD_PRELOAD cannot reach, for fallocate-shim
   --supervise (tests/libfallocate.supervise).  Built against the C
   library alone, statically: glibc's libc.a by make, musl by
   supervise.exp where musl-gcc is installed; libfallocate is nowhere in
   it.  Self-contained for that reason (no tcheck).

   t-sv prep FILE                  a sparse 1 MiB file holding pattern
                                   bytes at [64 KiB, 72 KiB) and
                                   [512 KiB, 512 KiB + 100)
   t-sv check FILE alloc|none LEN  PASS/FAIL: [0, LEN) allocated (st_blocks,
                                   SEEK_HOLE), or not; the pattern kept
   t-sv posix FILE OFF LEN [wronly]   posix_fallocate: "result ERR"
   t-sv raw FILE MODE OFF LEN [wronly] syscall(SYS_fallocate): "result ERR"
   t-sv lock FILE                  a write lock on [0, 100) and the offset
                                   at 12345, then posix_fallocate over
                                   1 MiB: PASS/FAIL, the lock is still ours
                                   (asked from a child) and the offset
                                   unmoved
   t-sv wait FILE READY GO         create READY, wait up to 60 s for GO,
                                   then raw mode 0 over 1 MiB: "result ERR"

   Each call also prints "pid PID", for the trace.  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1 << 20)

static int failures;

static void
ok (int cond, const char *what)
{
  printf ("%s: %s\n", cond ? "PASS" : "FAIL", what);
  failures += !cond;
}

static unsigned char
pat (long i)
{
  return (unsigned char) (i * 7 % 251 + 1);
}

static const struct { long off, len; } data[] = {
  { 64 << 10, 8 << 10 }, { 512 << 10, 100 },
};

static int
open_file (const char *path, int wronly)
{
  int fd = open (path, wronly ? O_WRONLY : O_RDWR);

  if (fd < 0)
    {
      perror (path);
      exit (2);
    }
  return fd;
}

static int
prep (const char *path)
{
  int fd = open (path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  unsigned char b[8 << 10];

  if (fd < 0 || ftruncate (fd, MIB) < 0)
    {
      perror (path);
      return 2;
    }
  for (size_t d = 0; d < sizeof data / sizeof data[0]; d++)
    {
      for (long i = 0; i < data[d].len; i++)
	b[i] = pat (data[d].off + i);
      if (pwrite (fd, b, (size_t) data[d].len, data[d].off) != data[d].len)
	{
	  perror ("pwrite");
	  return 2;
	}
    }
  return close (fd) == 0 ? 0 : 2;
}

static int
check (const char *path, const char *want, long len)
{
  int fd = open_file (path, 0), kept = 1;
  unsigned char b[8 << 10];
  struct stat st;
  char what[256];

  for (size_t d = 0; d < sizeof data / sizeof data[0]; d++)
    {
      if (pread (fd, b, (size_t) data[d].len, data[d].off) != data[d].len)
	kept = 0;
      for (long i = 0; kept && i < data[d].len; i++)
	kept = b[i] == pat (data[d].off + i);
    }
  ok (kept, "the bytes that held data are unchanged");
  fstat (fd, &st);
  long alloc = (long) st.st_blocks * 512;
  off_t hole = lseek (fd, 0, SEEK_HOLE);
  if (strcmp (want, "alloc") == 0)
    {
      snprintf (what, sizeof what, "[0, %ld) allocated (%ld bytes, first "
		"hole at %ld)", len, alloc, (long) hole);
      ok (alloc >= len && hole >= len, what);
    }
  else
    {
      snprintf (what, sizeof what, "[0, %ld) not allocated (%ld bytes)",
		len, alloc);
      ok (alloc < len / 2, what);
    }
  close (fd);
  return failures ? 1 : 0;
}

static void
result (int err)
{
  printf ("pid %ld\nresult %d\n", (long) getpid (), err);
  fflush (stdout);
}

static int
raw (int fd, int mode, long off, long len)
{
  return syscall (SYS_fallocate, fd, mode, (off_t) off, (off_t) len) == 0
	 ? 0 : errno;
}

/* Whether another process sees our write lock on [0, 100).  */
static int
still_locked (int fd)
{
  pid_t me = getpid (), pid = fork ();
  int status;

  if (pid == 0)
    {
      struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			 .l_start = 0, .l_len = 100 };

      _exit (fcntl (fd, F_GETLK, &l) == 0 && l.l_type == F_WRLCK
	     && l.l_pid == me ? 0 : 1);
    }
  return pid > 0 && waitpid (pid, &status, 0) == pid && WIFEXITED (status)
	 && WEXITSTATUS (status) == 0;
}

static int
lock (const char *path)
{
  int fd = open_file (path, 0), err;
  struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
		     .l_start = 0, .l_len = 100 };

  if (fcntl (fd, F_SETLK, &l) < 0 || lseek (fd, 12345, SEEK_SET) != 12345)
    {
      perror ("F_SETLK");
      return 2;
    }
  ok (still_locked (fd), "the record lock is seen before the call");
  err = posix_fallocate (fd, 0, MIB);
  result (err);
  ok (err == 0, "posix_fallocate succeeds");
  ok (still_locked (fd), "the record lock is still held after the call");
  ok (lseek (fd, 0, SEEK_CUR) == 12345, "the file offset has not moved");
  return failures ? 1 : 0;
}

static int
wait_go (const char *path, const char *ready, const char *go)
{
  int fd = open_file (path, 0), r;
  struct timespec ms10 = { 0, 10 * 1000 * 1000 };

  r = open (ready, O_WRONLY | O_CREAT, 0644);
  if (r < 0)
    {
      perror (ready);
      return 2;
    }
  close (r);
  for (int i = 0; i < 6000 && access (go, F_OK) != 0; i++)
    nanosleep (&ms10, NULL);
  result (raw (fd, 0, 0, MIB));
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc >= 3 && strcmp (argv[1], "prep") == 0)
    return prep (argv[2]);
  if (argc == 5 && strcmp (argv[1], "check") == 0)
    return check (argv[2], argv[3], atol (argv[4]));
  if ((argc == 5 || argc == 6) && strcmp (argv[1], "posix") == 0)
    {
      result (posix_fallocate (open_file (argv[2], argc == 6),
			       atol (argv[3]), atol (argv[4])));
      return 0;
    }
  if ((argc == 6 || argc == 7) && strcmp (argv[1], "raw") == 0)
    {
      result (raw (open_file (argv[2], argc == 7), atoi (argv[3]),
		   atol (argv[4]), atol (argv[5])));
      return 0;
    }
  if (argc == 3 && strcmp (argv[1], "lock") == 0)
    return lock (argv[2]);
  if (argc == 5 && strcmp (argv[1], "wait") == 0)
    return wait_go (argv[2], argv[3], argv[4]);
  fprintf (stderr, "usage: see tests/progs/t-sv.c\n");
  return 2;
}
