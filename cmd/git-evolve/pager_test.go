package main

import (
	"errors"
	"os"
	"testing"
)

// A pager the user quit before the end ends the command quietly, as
// git log does: the write to it says errPagerGone, which exits 0.
func TestPagerGone(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	if _, err := (pagerWriter{w}).Write([]byte("CYCLE  RESULT\n")); !errors.Is(err, errPagerGone) {
		t.Errorf("a write to a pager that has ended = %v, want errPagerGone", err)
	}
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	defer w2.Close()
	if n, err := (pagerWriter{w2}).Write([]byte("x\n")); err != nil || n != 2 {
		t.Errorf("a write to a pager that reads = %d, %v", n, err)
	}
}
