//go:build unix

package cycle

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO at a state file's path is refused, not opened: opening one for
// reading waits for a writer that never comes.
func TestReadStateFileFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "ledger.view")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ReadStateFile(fifo, 1<<20)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("a FIFO was read")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadStateFile waits on a FIFO")
	}
}

// Past the budget, state files are read rather than mapped; an Unmap gives
// the budget back, and Unmap of what was read does nothing.
func TestReadStateFileBudget(t *testing.T) {
	was := mapBudget
	defer func() { mapBudget = was }()
	maps.Lock()
	mapBudget = maps.bytes + 10000
	maps.Unlock()
	dir := t.TempDir()
	want := bytes.Repeat([]byte("x"), 6000)
	var got [2][]byte
	for i := range got {
		path := filepath.Join(dir, string(rune('a'+i)))
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		data, err := ReadStateFile(path, 1<<20)
		if err != nil || !bytes.Equal(data, want) {
			t.Fatalf("file %d: %d bytes, %v", i, len(data), err)
		}
		got[i] = data
	}
	mapped := func(data []byte) bool {
		maps.Lock()
		defer maps.Unlock()
		_, ok := maps.live[&data[0]]
		return ok
	}
	if !mapped(got[0]) || mapped(got[1]) {
		t.Fatalf("mapped: %v, %v; want the first alone (the second is over the budget)", mapped(got[0]), mapped(got[1]))
	}
	Unmap(got[1]) // read: nothing to undo
	if !bytes.Equal(got[1], want) {
		t.Errorf("Unmap changed a file that was read")
	}
	Unmap(got[0])
	if mapped(got[0]) {
		t.Errorf("still mapped after Unmap")
	}
	again, err := ReadStateFile(filepath.Join(dir, "b"), 1<<20)
	if err != nil || !mapped(again) {
		t.Errorf("after an Unmap, a file within the budget is not mapped: %v", err)
	}
	Unmap(again)
}
