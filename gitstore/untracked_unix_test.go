//go:build unix

package gitstore

import (
	"net"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO or a socket in the tree is no file git knows: git status and
// git ls-files --others pass it by, and so does the untracked scan (step
// compares the two).
func TestUntrackedScanSpecialFiles(t *testing.T) {
	s := newScanTree(t)
	s.write("tracked", "t")
	s.git("add", "-A")
	s.git("commit", "-qm", "base")
	s.step("clean", func() {})
	s.step("a fifo and a socket", func() {
		if err := syscall.Mkfifo(filepath.Join(s.dir, "pipe"), 0o644); err != nil {
			t.Fatal(err)
		}
		s.write("sub/real.txt", "r")
		if err := syscall.Mkfifo(filepath.Join(s.dir, "sub", "pipe"), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("unix", filepath.Join(s.dir, "sock"))
		if err != nil {
			t.Skipf("no unix socket here: %v", err)
		}
		t.Cleanup(func() { l.Close() })
	})
	s.step("unchanged", func() {})
}
