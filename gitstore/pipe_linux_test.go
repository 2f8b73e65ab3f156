package gitstore

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestGrowPipe: a pipe asked to hold 1 MiB holds it, where Linux lets an
// unprivileged process ask for that much.
func TestGrowPipe(t *testing.T) {
	if b, err := os.ReadFile("/proc/sys/fs/pipe-max-size"); err == nil {
		if max, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && max < 1<<20 {
			t.Skipf("pipe-max-size is %d", max)
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	size := func() int {
		n, _, errno := syscall.Syscall(syscall.SYS_FCNTL, r.Fd(), 1032, 0) // F_GETPIPE_SZ
		if errno != 0 {
			t.Fatal(errno)
		}
		return int(n)
	}
	before := size()
	growPipe(r, 1<<20)
	if got := size(); got < 1<<20 {
		t.Errorf("the pipe holds %d bytes (%d before), want 1 MiB", got, before)
	}
}
