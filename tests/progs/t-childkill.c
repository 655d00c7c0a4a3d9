/* t-childkill DIR: under fallocate-shim --supervise, the process that
   fills for a call killed part way (as by the OOM killer): the call
   gets EIO, its data unchanged, and what the child wrote stays (zeros
   past the old end: fallocate-shim(1); that another process may have
   written there meanwhile cannot be told, t-killfill).  A 1 MiB file
   holding a pattern is grown to 900 MiB by the fallocate system call;
   100 ms into the fill each child of the supervisor (our parent) that
   fills is sent SIGKILL.  */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "tcheck.h"

#define MIB (1LL << 20)

static int fd, r = -1;
static volatile int done;

static void *
grow (void *arg)
{
  (void) arg;
  r = syscall (SYS_fallocate, fd, 0, (int64_t) 0, 900 * MIB) < 0 ? errno : 0;
  done = 1;
  return NULL;
}

/* Whether process PID's exit signal is none (/proc/PID/stat's 38th
   field): a child the supervisor fills in, not one of its others.  */
static int
filler (int pid)
{
  char path[64], buf[1024], *p;
  FILE *f;
  int sig = -1;

  snprintf (path, sizeof path, "/proc/%d/stat", pid);
  f = fopen (path, "r");
  if (!f)
    return 0;
  if (fgets (buf, sizeof buf, f) && (p = strrchr (buf, ')')) != NULL)
    {
      /* Fields from the third on, after the name.  */
      for (int i = 3; i < 38 && p; i++)
	p = strchr (p + 1, ' ');
      if (p)
	sig = atoi (p + 1);
    }
  fclose (f);
  return sig == 0;
}

/* The children that fill found before the call (the supervisor has
   others with no exit signal).  */
static int old[64], nbefore;

static int
before (int pid)
{
  for (int i = 0; i < nbefore; i++)
    if (old[i] == pid)
      return 1;
  return 0;
}

/* With KILLING, SIGKILL to every child of process SV that fills and was
   not there before; without, those there now noted: how many.  */
static int
fillers (pid_t sv, int killing)
{
  char path[64], buf[4096];
  struct dirent *e;
  int n = 0;
  DIR *d;

  snprintf (path, sizeof path, "/proc/%d/task", (int) sv);
  d = opendir (path);
  while (d && (e = readdir (d)) != NULL)
    {
      char cpath[512];
      FILE *f;

      if (e->d_name[0] == '.')
	continue;
      snprintf (cpath, sizeof cpath, "%s/%s/children", path, e->d_name);
      f = fopen (cpath, "r");
      if (!f)
	continue;
      while (fscanf (f, "%4095s", buf) == 1)
	if (atoi (buf) != getpid () && filler (atoi (buf)) && !before (atoi (buf))
	    && (!killing || kill (atoi (buf), SIGKILL) == 0))
	  {
	    if (!killing && nbefore < 64)
	      old[nbefore++] = atoi (buf);
	    n++;
	  }
      fclose (f);
    }
  if (d)
    closedir (d);
  return n;
}

int
main (int argc, char **argv)
{
  char path[4096];
  struct timespec ms100 = { 0, 100 * 1000 * 1000 };
  pthread_t t;

  if (argc != 2)
    {
      fprintf (stderr, "usage: t-childkill DIR\n");
      return 2;
    }
  fd = t_create (argv[1], "childkill", path, sizeof path);
  t_put (fd, 0, MIB, 11);
  fillers (getppid (), 0);
  pthread_create (&t, NULL, grow, NULL);
  nanosleep (&ms100, NULL);
  int killed = done ? 0 : fillers (getppid (), 1);
  pthread_join (t, NULL);
  printf ("# %d killed; the call %d, the size %lld\n", killed, r,
	  (long long) t_size (fd));
  if (killed == 0)
    t_unsupported ("no filling process to kill (the fill was over)");
  else
    {
      t_ok (r == EIO, "the call gets EIO (got %s)", strerror (r));
      int64_t size = t_size (fd);

      t_ok (size >= MIB && size <= 900 * MIB, "the file between its former "
	    "size and the range's end (%lld)", (long long) size);
      t_ok (t_same (fd, 0, MIB, 11), "its data unchanged");
      t_ok (t_zero (fd, MIB, (size_t) (size - MIB)), "zeros past it");
    }
  close (fd);
  unlink (path);
  return t_done ();
}
