// t-sv.go: t-sv's "raw" call from Go, which makes the system call itself
// (syscall.Fallocate): no C library, so nothing to preload.
//
//	t-sv-go raw FILE MODE OFF LEN    "pid PID" and "result ERR"
package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

func main() {
	if len(os.Args) != 6 || os.Args[1] != "raw" {
		fmt.Fprintln(os.Stderr, "usage: t-sv-go raw FILE MODE OFF LEN")
		os.Exit(2)
	}
	f, err := os.OpenFile(os.Args[2], os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	mode, _ := strconv.ParseUint(os.Args[3], 10, 32)
	off, _ := strconv.ParseInt(os.Args[4], 10, 64)
	n, _ := strconv.ParseInt(os.Args[5], 10, 64)
	r := 0
	if e := syscall.Fallocate(int(f.Fd()), uint32(mode), off, n); e != nil {
		r = int(e.(syscall.Errno))
	}
	fmt.Printf("pid %d\nresult %d\n", os.Getpid(), r)
}
