/* fa-fusesv MNT BACKING N pass|hold FAST: a FUSE server with N client
   threads of its own, for tests/libfallocate.supervise (built there
   against libfuse3), run under fallocate-shim --supervise: every
   fallocate call below goes to one supervisor.  MNT/f0... are BACKING;
   the N threads each call fallocate on one of them at once, which the supervisor
   makes on a copy of their descriptor, and so into this server:

   pass  the handler calls fallocate(2) on BACKING, as libfuse's
         passthrough and go-fuse's loopback do, once all N calls have
         reached it (or 30 s have passed): calls that need a worker of
         the supervisor while N workers wait for this server.  PASS if
         every call returns 0 within 60 s (else a deadlock).
   hold  the handler holds each call until a call of the main thread on
         FAST (KEEP_SIZE, 4 KiB), made once all N are held, has returned,
         or 30 s have passed.  PASS if that call returned while N others
         were held: it did not wait for them.

   On a deadlock it aborts its FUSE connection (fusectl), so that its
   own exit, and the supervisor's threads, do not wait for it forever,
   and exits without unmounting (the test unmounts).  */
#define FUSE_USE_VERSION 312
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MIB (1 << 20)
#define WAIT 30

static const char *backing, *mnt;
static int hold, n_clients, backing_fd;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int held, released, returned, failed;

/* MNT/f0, MNT/f1...: a file for each client, all BACKING (FUSE's
   fallocate takes the inode's lock: calls on one file would wait for
   each other in the kernel).  */
static int
is_file (const char *path)
{
  return path[0] == '/' && path[1] == 'f' && path[2] >= '0' && path[2] <= '9'
	 && path[3] == '\0';
}

static int
sv_getattr (const char *path, struct stat *st, struct fuse_file_info *fi)
{
  (void) fi;
  if (strcmp (path, "/") == 0)
    return stat ("/", st) < 0 ? -errno : 0;
  if (is_file (path))
    return stat (backing, st) < 0 ? -errno : 0;
  return -ENOENT;
}

static int
sv_open (const char *path, struct fuse_file_info *fi)
{
  (void) fi;
  return is_file (path) ? 0 : -ENOENT;
}

/* A deadline WAIT seconds from now.  */
static struct timespec
deadline (void)
{
  struct timespec t;

  clock_gettime (CLOCK_REALTIME, &t);
  t.tv_sec += WAIT;
  return t;
}

static int
sv_fallocate (const char *path, int mode, off_t off, off_t len,
	      struct fuse_file_info *fi)
{
  struct timespec t = deadline ();

  (void) path, (void) fi;
  pthread_mutex_lock (&mu);
  held++;
  pthread_cond_broadcast (&cv);
  if (hold)
    while (!released)
      {
	if (pthread_cond_timedwait (&cv, &mu, &t) == ETIMEDOUT)
	  released = 1;		/* the main thread's call came too late */
      }
  else
    while (held < n_clients
	   && pthread_cond_timedwait (&cv, &mu, &t) != ETIMEDOUT)
      ;
  pthread_mutex_unlock (&mu);
  if (hold)
    return 0;
  return syscall (SYS_fallocate, backing_fd, mode, off, len) < 0 ? -errno : 0;
}

static const struct fuse_operations ops = {
  .getattr = sv_getattr,
  .open = sv_open,
  .fallocate = sv_fallocate,
};

static void *
loop (void *f)
{
  fuse_loop_mt (f, fuse_loop_cfg_create ());
  return NULL;
}

static void *
client (void *arg)
{
  long i = (long) arg;
  char path[4096];
  int fd, err;

  snprintf (path, sizeof path, "%s/f%ld", mnt, i);
  fd = open (path, O_RDWR);
  err = fd < 0 ? errno
	: syscall (SYS_fallocate, fd, 0, (off_t) i * MIB, (off_t) MIB) < 0
	? errno : 0;
  pthread_mutex_lock (&mu);
  returned++;
  failed += err != 0;
  pthread_cond_broadcast (&cv);
  pthread_mutex_unlock (&mu);
  if (err)
    printf ("# client %ld: %s\n", i, strerror (err));
  return NULL;
}

/* Wait until *COUNTER reaches WANT or 2 * WAIT seconds pass: whether
   it did.  */
static int
wait_for (int *counter, int want)
{
  struct timespec t = deadline ();

  t.tv_sec += WAIT;
  int r;

  pthread_mutex_lock (&mu);
  while (*counter < want
	 && pthread_cond_timedwait (&cv, &mu, &t) != ETIMEDOUT)
    ;
  r = *counter >= want;
  pthread_mutex_unlock (&mu);
  return r;
}

/* The FUSE connection of the mount on device DEV aborted: every request
   waiting for this server fails.  */
static void
abort_connection (dev_t dev)
{
  char path[100];
  FILE *f;

  snprintf (path, sizeof path, "/sys/fs/fuse/connections/%u/abort",
	    minor (dev));
  if (access (path, F_OK) != 0)
    mount ("fusectl", "/sys/fs/fuse/connections", "fusectl", 0, NULL);
  f = fopen (path, "w");
  if (f != NULL)
    {
      fputs ("1", f);
      fclose (f);
    }
}

int
main (int argc, char **argv)
{
  char *fargv[] = { argv[0], NULL };
  struct fuse_args args = FUSE_ARGS_INIT (1, fargv);
  struct fuse *f;
  pthread_t t;
  int fast = -1, ok = 1;
  struct stat st;

  if (argc != 6 || atoi (argv[3]) > 10)
    {
      fprintf (stderr, "usage: fa-fusesv MNT BACKING N pass|hold FAST\n");
      return 2;
    }
  mnt = argv[1];
  backing = argv[2];
  n_clients = atoi (argv[3]);
  hold = strcmp (argv[4], "hold") == 0;
  backing_fd = open (backing, O_RDWR | O_CREAT, 0644);
  if (hold)
    fast = open (argv[5], O_RDWR | O_CREAT, 0644);
  if (backing_fd < 0 || (hold && fast < 0))
    {
      perror ("open");
      return 2;
    }
  f = fuse_new (&args, &ops, sizeof ops, NULL);
  if (f == NULL || fuse_mount (f, mnt) != 0
      || pthread_create (&t, NULL, loop, f) != 0)
    {
      fprintf (stderr, "fa-fusesv: cannot mount %s\n", mnt);
      return 2;
    }
  if (stat (mnt, &st) < 0)
    return 2;
  for (long i = 0; i < n_clients; i++)
    if (pthread_create (&t, NULL, client, (void *) i) != 0)
      return 2;
  if (hold)
    {
      int all = wait_for (&held, n_clients), err;

      printf ("%s: %d calls held by the server\n", all ? "PASS" : "FAIL",
	      n_clients);
      err = syscall (SYS_fallocate, fast, 1, (off_t) 0, (off_t) 4096) < 0
	    ? errno : 0;
      pthread_mutex_lock (&mu);
      int during = !released;
      released = 1;
      pthread_cond_broadcast (&cv);
      pthread_mutex_unlock (&mu);
      printf ("%s: a call on another file returns (%d) while %d calls "
	      "wait in the server\n", during && err == 0 ? "PASS" : "FAIL",
	      err, n_clients);
      ok = all && during && err == 0;
    }
  if (!wait_for (&returned, n_clients))
    {
      printf ("FAIL: %d calls of %d returned within %d s (a deadlock)\n",
	      returned, n_clients, 2 * WAIT);
      fflush (stdout);
      abort_connection (st.st_dev);
      _exit (1);
    }
  if (!hold)
    printf ("%s: all %d calls reached the server at once\n",
	    held >= n_clients ? "PASS" : "FAIL", n_clients);
  printf ("%s: %d calls through the server returned, %d failed\n",
	  failed ? "FAIL" : "PASS", n_clients, failed);
  fflush (stdout);
  fuse_unmount (f);
  _exit (ok && !failed ? 0 : 1);
}
