/* ia64: long __fa_syscall (int fd, int mode, int64_t offset, int64_t len),
   0 or -errno, in assembly because no ia64 C compiler is packaged here
   (ia64 left Linux in 6.7).  fallocate is 1024 + 279 = 1303
   (arch/ia64/kernel/syscalls/syscall.tbl).  Number in r15, break 0x100000;
   the kernel reads the arguments from the stacked registers of the frame
   that breaks, so this leaf needs no frame of its own: our inputs r32..r35
   (the caller's out0..out3) are fd, mode, offset, len, one register each.
   It answers in r8, and sets r10 to -1 when r8 is a positive errno.  */
	.explicit
	.text
	.align 32
	.global __fa_syscall
	.hidden __fa_syscall
	.proc __fa_syscall
__fa_syscall:
	mov r15 = 1303
	;;
	break 0x100000
	;;
	cmp.eq p6, p0 = -1, r10
	;;
(p6)	sub r8 = r0, r8
	br.ret.sptk.many b0
	.endp __fa_syscall
