/* A fallocate call made by another process, answered under a policy:
   fallocate-supervise (supervise/) answers so the calls its seccomp
   filter sends it, through a copy of the caller's descriptor.  The same
   code as the library's own calls (fa-policy.c, fa-posix.c).  */
#include <errno.h>
#include "fa-policy.h"

int
__fa_writes (const struct fa_policy *p, int mode)
{
  return p->action == FA_EMULATE || (mode == 0 && p->action == FA_FILL);
}

int
__fa_answer (const struct fa_policy *p, int fd, int mode, int64_t off,
	     int64_t len, const char **how)
{
  int saved = errno, err;

  *how = "";
  if (p->action == FA_NOOP)
    err = 0, *how = "noop";
  else if (p->action == FA_INJECT)
    err = p->injected, *how = "injected";
  else if ((err = (int) -__fa_syscall (fd, mode, off, len)) != EOPNOTSUPP
	   && err != ENOSYS)
    ;
  /* A block device's refusal stays the kernel's (__fa_emulate), not
     posix_fallocate's ENODEV.  */
  else if (__fa_writes (p, mode))
    {
      int refused = err;

      err = __fa_emulate (fd, mode, off, len, refused);
      if (mode == 0)
	*how = err == refused ? "" : "fallback";
      else
	*how = err == 0 ? "emulated" : err == refused ? "not emulated"
	       : "emulation failed";
    }
  errno = saved;
  return err;
}
