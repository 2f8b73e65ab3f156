//go:build unix

package store

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// AppendStateFile appends only when same says the file is the one read,
// not to a file that is not there or whose lock another holds; a read
// takes the file as the append left it.
func TestAppendStateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kept")
	always := func(*os.File, int64) bool { return true }
	if ok, err := AppendStateFile(path, always, []byte("x")); ok || err != nil {
		t.Errorf("no file: appended %v, %v", ok, err)
	}
	if err := os.WriteFile(path, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	var sizes []int64
	ok, err := AppendStateFile(path, func(_ *os.File, size int64) bool { sizes = append(sizes, size); return size == 5 }, []byte(" second"))
	if !ok || err != nil || len(sizes) != 1 {
		t.Fatalf("appended %v, %v, asked %v", ok, err, sizes)
	}
	if ok, err := AppendStateFile(path, func(_ *os.File, size int64) bool { return size == 5 }, []byte(" third")); ok || err != nil {
		t.Errorf("appended to a file that is not the one read: %v, %v", ok, err)
	}
	// another holds the lock: not waited for past a little
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Skipf("no locks here: %v", err)
	}
	if ok, err := AppendStateFile(path, always, []byte(" fourth")); ok || err != nil {
		t.Errorf("appended under another's lock: %v, %v", ok, err)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	data, err := ReadStateFile(path, 100)
	if err != nil || string(data) != "first second" {
		t.Errorf("read %q, %v", data, err)
	}
}
