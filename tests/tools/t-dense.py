# t-dense.py FILE: posix_fallocate over a file without holes, 4 MiB of
# zeros written as data (run under fallocate-shim on a FUSE filesystem,
# where holes cannot be found): the fallback must write nothing, so the
# mtime set before stays.  glibc's fallback writes a byte per block.
import os, sys
p = sys.argv[1]
fd = os.open(p, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b'\0' * (4 << 20))
os.fsync(fd)
os.utime(fd, (1000000000, 1000000000))
b = os.fstat(fd)
os.posix_fallocate(fd, 0, 4 << 20)
a = os.fstat(fd)
ok = a.st_mtime_ns == b.st_mtime_ns and a.st_size == b.st_size
print("%s: a file without holes: nothing written (mtime %s, blocks %d -> %d)"
      % ("PASS" if ok else "FAIL", "kept" if a.st_mtime_ns == b.st_mtime_ns else "changed", b.st_blocks, a.st_blocks))
os.unlink(p)
