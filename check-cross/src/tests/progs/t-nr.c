/* t-nr: the system call number of the sysdeps leaf configure chose is the
   toolchain's own <asm/unistd.h> __NR_fallocate.  Checked when compiling,
   so it holds even for an ABI no emulator here can run (x32, s390).  */
#include <stdio.h>
#include <asm/unistd.h>
#include "fa-arch.h"

_Static_assert (FA_NR_FALLOCATE == __NR_fallocate,
		"FA_NR_FALLOCATE is not <asm/unistd.h>'s __NR_fallocate");

int
main (void)
{
  printf ("PASS: FA_NR_FALLOCATE is __NR_fallocate (%ld)\n",
	  (long) __NR_fallocate);
  return 0;
}
