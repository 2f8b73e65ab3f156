//go:build unix

package store

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
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
	// Until it returns, a writer that does not wait is tried: it can open
	// the FIFO only once ReadStateFile has opened it for reading (and
	// waits there), which it must not; that open also ends the wait.
	for {
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("a FIFO was read")
			}
			return
		default:
		}
		w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			w.Close()
			<-done
			t.Fatal("ReadStateFile opened a FIFO, and waited for a writer")
		}
		runtime.Gosched()
	}
}

// Past the budget or the count of mappings, state files are read rather
// than mapped, and so is a small one; an Unmap gives the budget back, and
// Unmap of what was read does nothing.
func TestReadStateFileBudget(t *testing.T) {
	wasBudget, wasCount, wasMin := mapBudget, maxMappings, minMapped
	defer func() { mapBudget, maxMappings, minMapped = wasBudget, wasCount, wasMin }()
	dir := t.TempDir()
	want := bytes.Repeat([]byte("x"), 6000)
	read := func(name string) []byte {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		data, err := ReadStateFile(path, 1<<20)
		if err != nil || !bytes.Equal(data, want) {
			t.Fatalf("%s: %d bytes, %v", name, len(data), err)
		}
		return data
	}
	mapped := func(data []byte) bool {
		maps.Lock()
		defer maps.Unlock()
		_, ok := maps.live[&data[0]]
		return ok
	}
	if small := read("small"); mapped(small) {
		t.Errorf("a file under %d bytes was mapped", minMapped)
	}
	minMapped = 0
	maps.Lock()
	mapBudget = maps.bytes + 10000
	maps.Unlock()
	a, b := read("a"), read("b")
	if !mapped(a) || mapped(b) {
		t.Fatalf("mapped: %v, %v; want the first alone (the second is over the budget)", mapped(a), mapped(b))
	}
	Unmap(b) // read: nothing to undo
	if !bytes.Equal(b, want) {
		t.Errorf("Unmap changed a file that was read")
	}
	Unmap(a[:10]) // the mapping, from its first byte
	if mapped(a) {
		t.Errorf("still mapped after Unmap")
	}
	again := read("b")
	if !mapped(again) {
		t.Errorf("after an Unmap, a file within the budget is not mapped")
	}
	Unmap(again)

	mapBudget = wasBudget
	maps.Lock()
	maxMappings = len(maps.live) + 1
	maps.Unlock()
	c, d := read("c"), read("d")
	if !mapped(c) || mapped(d) {
		t.Errorf("mapped: %v, %v; want the first alone (the second is past the count)", mapped(c), mapped(d))
	}
	Unmap(c)
}

// A process that lists the ledger again and again (git evolve mcp) keeps
// no more mappings than the bound; the index built from the view lets its
// mapping go.
func TestViewMappingsBounded(t *testing.T) {
	wasMin := minMapped
	defer func() { minMapped = wasMin }()
	minMapped = 0 // this ledger's view is small
	dir, commits := testRepo(t, 4)
	for _, c := range commits[:3] {
		record(t, openLedger(t, dir), c, 0)
	}
	count := func() int {
		maps.Lock()
		defer maps.Unlock()
		return len(maps.live)
	}
	want := export(t, openLedger(t, dir)) // the view, saved
	before := count()
	if before+5 > maxMappings {
		t.Fatalf("%d mappings before the test", before)
	}
	for i := 0; i < 5; i++ {
		l := openLedger(t, dir)
		snap, err := l.repo.ReadNotes(NotesRef)
		if err != nil {
			t.Fatal(err)
		}
		if ix, err := l.viewIndex(snap); err != nil || ix.Max() != 3 {
			t.Fatalf("the index from the view: %v", err)
		}
		if list, err := l.Show("1"); err != nil || len(list.Entries) != 1 {
			t.Fatalf("show 1: %v, %v", list, err)
		}
	}
	if n := count(); n > before {
		t.Errorf("%d mappings after 5 indexes built from the view, %d before", n, before)
	}
	// A saved view of a notes commit that is not here is read, and the
	// ledger's view built anew: the file read is let go.
	view := filepath.Join(dir, ".git", "evolve", "ledger.view")
	data, err := viewBytes(view)
	if err != nil {
		t.Fatal(err)
	}
	copy(data[len(viewMagic):], bytes.Repeat([]byte{0xab}, 20))
	if err := writeView(view, data, 0o600); err != nil {
		t.Fatal(err)
	}
	before = count()
	if got := export(t, openLedger(t, dir)); got != want {
		t.Fatalf("with a view of another notes commit:\n%s\nwant\n%s", got, want)
	}
	if n := count(); n > before {
		t.Errorf("%d mappings after a view built anew, %d before", n, before)
	}
	for i := 0; i < 3*maxMappings; i++ {
		if got := export(t, openLedger(t, dir)); got != want {
			t.Fatalf("listing %d:\n%s\nwant\n%s", i, got, want)
		}
	}
	if n := count(); n > maxMappings {
		t.Errorf("%d mappings after %d listings, more than %d", n, 3*maxMappings, maxMappings)
	}
}
