//go:build unix

package store

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// lockedByAnother takes the lock of the file at path as another process
// would, and gives what lets it go (skipped where nothing is locked).
func lockedByAnother(t *testing.T, path string) (unlock func()) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Skipf("no locks here: %v", err)
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
}

// Another holds the lock past what a writer waits: nothing is written.
func TestPutKeptBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.view")
	if err := PutKept(path, nil, bytesParts(sections(1), SecLines)); err != nil {
		t.Fatal(err)
	}
	unlock := lockedByAnother(t, path)
	if err := PutKept(path, nil, bytesParts(sections(2), SecLines)); err == nil {
		t.Error("written under another's lock")
	}
	unlock()
	if got := sectionsAt(t, path); string(got[SecLines]) != "lines 1" {
		t.Errorf("read %q", got[SecLines])
	}
}

// A section kept as it was read is named only where the writer read it:
// another verify's sections of the same lengths, appended since under the
// same secret, are not the ones this verify read, and its delta is not
// put beside them.
func TestPutKeptNamesOnlyWhatWasRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.view")
	if err := PutKept(path, nil, bytesParts(sections(1), verifyParts...)); err != nil {
		t.Fatal(err)
	}
	built := OpenKept(path) // verify A reads: state 1, keys 1
	defer built.Release()
	// verify B writes its four, of the same lengths
	if err := PutKept(path, nil, bytesParts(sections(2), verifyParts...)); err != nil {
		t.Fatal(err)
	}
	parts := bytesParts(sections(3), SecDelta, SecObjects)
	parts[SecState], parts[SecKeys] = &Part{Kept: true}, &Part{Kept: true}
	if err := PutKept(path, built, parts); err != nil {
		t.Fatal(err)
	}
	if got := sectionsAt(t, path); string(got[SecState]) != "state 1" || string(got[SecKeys]) != "keys 1" {
		t.Errorf("verify A's delta (%q) beside state %q and keys %q: mixed from two verifies", got[SecDelta], got[SecState], got[SecKeys])
	}
}

// The secret tells a file written anew from the one a writer read: a file
// written anew whose layout puts another verify's state at the very place
// and length the writer read its own does not have it named as the
// writer's.
func TestPutKeptKeptAcrossWriteAnew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.view")
	if err := PutKept(path, nil, bytesParts(sections(1), verifyParts...)); err != nil {
		t.Fatal(err)
	}
	built := OpenKept(path) // verify A: state 1 at the head's end
	defer built.Release()
	if err := PutKept(path, nil, bytesParts(sections(2), verifyParts...)); err != nil {
		t.Fatal(err)
	}
	// a writer of the copies, past the slack: the file anew, verify B's
	// state at the head's end again
	withSlack(t, 0)
	var drop [Sections]*Part
	drop[SecCopies] = &Part{}
	if err := PutKept(path, nil, drop); err != nil {
		t.Fatal(err)
	}
	k := OpenKept(path)
	same := k.off[SecState] == built.off[SecState] && len(k.Section(SecState)) == len(built.Section(SecState))
	k.Release()
	if !same {
		t.Fatal("premise: verify B's state is not where verify A read its own")
	}
	withSlack(t, 1<<20)
	parts := bytesParts(sections(3), SecDelta, SecObjects)
	parts[SecState], parts[SecKeys] = &Part{Kept: true}, &Part{Kept: true}
	if err := PutKept(path, built, parts); err != nil {
		t.Fatal(err)
	}
	if got := sectionsAt(t, path); string(got[SecState]) != "state 1" || string(got[SecKeys]) != "keys 1" {
		t.Errorf("verify A's delta beside state %q and keys %q", got[SecState], got[SecKeys])
	}
}

// A writer that opened the file before another replaced it (a write anew,
// by rename), and then had its lock, writes to the file there is now, not
// the one replaced: both writes are in it.
func TestPutKeptOnReplacedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.view")
	if err := PutKept(path, nil, bytesParts(sections(1), SecLines)); err != nil {
		t.Fatal(err)
	}
	unlock := lockedByAnother(t, path)
	opened := make(chan struct{})
	keptOpened = func() { keptOpened = nil; close(opened) }
	defer func() { keptOpened = nil }()
	was := writerTries
	writerTries = 60_000 // no wait runs out: the test lets go of the lock
	defer func() { writerTries = was }()
	done := make(chan error, 1)
	go func() { done <- PutKept(path, nil, bytesParts(sections(2), SecMerged)) }()
	<-opened // the writer has opened the old file and waits for its lock
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if err := writeKeptAnew(path, f, readTableOf(f, fi.Size()), nil, bytesParts(sections(3), SecCopies)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := sectionsAt(t, path)
	if string(got[SecLines]) != "lines 1" || string(got[SecMerged]) != "merged 2" || string(got[SecCopies]) != "copies 3" {
		t.Errorf("after a write onto a file replaced while it waited: %q", got)
	}
}

// A reader that could not have the lock while a writer appends past what
// a reader waits reads the file part way through, which does not read; it
// reads again, waiting as a writer does, and takes the file as the append
// left it: never no file at all (a read of every note, at 100,000 records
// 3 s).
func TestOpenKeptDuringLongAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.view")
	if err := PutKept(path, nil, bytesParts(sections(1), SecLines, SecMerged)); err != nil {
		t.Fatal(err)
	}
	was := writerTries
	writerTries = 60_000 // no wait runs out: the append ends as the reader retries
	defer func() { writerTries = was }()
	started, release := make(chan struct{}), make(chan struct{})
	keptRetry = func() { keptRetry = nil; close(release) }
	defer func() { keptRetry = nil }()
	done := make(chan error, 1)
	go func() {
		var parts [Sections]*Part
		parts[SecLines] = &Part{Write: func(w *bufio.Writer) error {
			w.Write(bytes.Repeat([]byte("x"), 600<<10)) // past the writer's buffer: in the file
			w.Flush()
			close(started)
			<-release
			_, err := w.Write([]byte("end"))
			return err
		}}
		done <- PutKept(path, nil, parts)
	}()
	<-started
	k := OpenKept(path)
	if k == nil {
		t.Fatal("a read during a long append found no file that reads")
	}
	if n := len(k.Section(SecLines)); string(k.Section(SecMerged)) != "merged 1" || n != len("lines 1") && n != 600<<10+3 {
		t.Errorf("read: merged %q, lines of %d bytes", k.Section(SecMerged), n)
	}
	k.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
