package gitstore

import (
	"os"
	"syscall"
)

// fSetPipeSize is Linux's F_SETPIPE_SZ.
const fSetPipeSize = 1031

// growPipe asks Linux to let the pipe f reads from hold size bytes (64 KiB
// by default; an unprivileged process may ask for up to
// /proc/sys/fs/pipe-max-size, 1 MiB by default): git writes a stream of
// notes in pages of 4 KiB, and with room for more of them this process
// wakes and reads less often. A refusal leaves the pipe as it was.
func growPipe(f *os.File, size int) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSize, uintptr(size))
	})
}
