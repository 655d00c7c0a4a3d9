/* t-words: the six words a 32-bit leaf's fa-arch.h gives the kernel, read
   back the way that ABI's kernel entry reads them.  Built on the host once
   per leaf (-I the leaf, -DT_<ABI>): fa_words is the very code the stub
   runs; only fa_trap, compiled for the leaf's machine alone, is left out.
   Each T_ block transcribes the kernel's entry for that ABI (Linux 6.1).  */
#include <stdio.h>
#include <stdint.h>
#include "fa-arch.h"
#include "tcheck.h"

#define HI(w, i) ((uint64_t) (w)[i] << 32 | (w)[(i) + 1])
#define LO(w, i) ((uint64_t) (w)[(i) + 1] << 32 | (w)[i])

#if defined T_I386
/* sys_ia32_fallocate (fd, mode, offset_lo, offset_hi, len_lo, len_hi),
   arch/x86/kernel/sys_ia32.c.  */
# define K64 LO
#elif defined T_ARM
/* aarch32_fallocate (fd, mode, arg_u32p (offset), arg_u32p (len)), little
   endian: name_lo, name_hi (arch/arm64/kernel/sys32.c); a 32-bit arm kernel
   reads the same EABI register pairs r2:r3 and r4:r5.  */
# define K64 LO
#elif defined T_MIPS_O32 && defined __MIPSEB__
/* sys32_fallocate (fd, mode, offset_a2, offset_a3, len_a4, len_a5),
   merge_64 (r1, r2) under __MIPSEB__: r1 high (arch/mips/kernel/linux32.c).  */
# define K64 HI
#elif defined T_MIPS_O32
/* Same, merge_64 under __MIPSEL__: r2 high.  */
# define K64 LO
#elif defined T_POWERPC32
/* ppc_fallocate (fd, mode, offset1, offset2, len1, len2), merge_64 (high,
   low) on big-endian (arch/powerpc/include/asm/syscalls.h).  */
# define K64 HI
#elif defined T_S390_32
/* compat_sys_s390_fallocate (fd, mode, offhigh, offlow, lenhigh, lenlow),
   arch/s390/kernel/compat_linux.c: r2..r7.  */
# define K64 HI
#elif defined T_HPPA
/* parisc_fallocate (fd, mode, offhi, offlo, lenhi, lenlo),
   arch/parisc/kernel/sys_parisc.c.  */
# define K64 HI
#elif defined T_M68K
/* sys_fallocate (int, int, loff_t, loff_t) reading d1..d5, a0 saved as
   consecutive stack words: memory order of a big-endian machine.  */
# define K64 HI
#elif defined T_SH
/* sys_fallocate (int, int, loff_t, loff_t) with offset in r6:r7 and len
   in r0:r1 pushed as stack words (entry-common.S): little-endian order.  */
# define K64 LO
#else
# error "t-words: no T_<ABI> given"
#endif

int
main (void)
{
  static const int64_t v[][2] = {
    { HI_OFF, HI_LEN },
    { 0x0123456789abcdefLL, 0x7edcba9876543210LL },
    { 0x00000001ffffffffLL, 0x00000000fffffffeLL },
  };
  fa_word w[FA_NWORDS];

  t_ok (FA_NWORDS == 6, "six argument words (got %d)", FA_NWORDS);
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    {
      fa_words (w, 7, 0x11, v[i][0], v[i][1]);
      t_ok (w[0] == 7 && w[1] == 0x11, "fd and mode in words 1 and 2");
      t_ok (K64 (w, 2) == (uint64_t) v[i][0],
	    "offset %#llx in words 3, 4 (kernel reads %#llx)",
	    (unsigned long long) v[i][0], (unsigned long long) K64 (w, 2));
      t_ok (K64 (w, 4) == (uint64_t) v[i][1],
	    "len %#llx in words 5, 6 (kernel reads %#llx)",
	    (unsigned long long) v[i][1], (unsigned long long) K64 (w, 4));
    }
  return t_done ();
}
