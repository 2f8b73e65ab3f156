package gitstore

import (
	"errors"
	"fmt"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestStreamNotes: a fanned-out ledger read through the stream (its own
// git cat-file, the walk and fn running at once) gives every note, whole,
// in path order, as git notes list and git cat-file have them, notes much
// larger than a chunk too; an error from fn stops it, and nothing it
// started is left running.
func TestStreamNotes(t *testing.T) {
	testenv.Slow(t)
	r := newRepo(t)
	setEnv(t)
	repo := r.open()
	edits := fakeEdits(0, 1000, "note %d\n")
	edits[fakeObj(7)] = strings.Repeat("a long note\n", 3*streamChunkSize/12)
	edits[fakeObj(8)] = strings.Repeat("x", streamChunkSize-5) + "\n"
	snap := mustWriteNotes(t, repo, testNotesRef, repo.EmptyNotes(), edits, nil)
	root, err := repo.readTree(treeOf(snap))
	if err != nil || len(root) <= streamThreshold {
		t.Fatalf("premise: %d root entries (%v), want more than %d so that notes are streamed", len(root), err, streamThreshold)
	}

	want := r.catBlobs(r.notesList(testNotesRef))
	byObj := r.notesList(testNotesRef)
	before := runtime.NumGoroutine()
	var last string
	n := 0
	err = snap.ForEachNote(func(obj Hash, data []byte) error {
		path := obj.String()
		if path <= last {
			return fmt.Errorf("%s after %s: not in path order", path, last)
		}
		last = path
		if w := want[byObj[obj]]; string(data) != w {
			return fmt.Errorf("the note on %s is %d bytes, git has %d", obj.Short(), len(data), len(w))
		}
		n++
		return nil
	})
	if err != nil || n != len(edits) {
		t.Fatalf("%d notes read (%v), want %d", n, err, len(edits))
	}

	stop := errors.New("stop")
	n = 0
	err = snap.ForEachNote(func(Hash, []byte) error {
		if n++; n == 500 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 500 {
		t.Errorf("fn failing at note 500: %v after %d notes", err, n)
	}
	// The goroutines the streams started end (a poll: their ends are
	// asynchronous to the return).
	deadline := time.Now().Add(2 * time.Minute) // only a leak waits it out
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Errorf("%d goroutines after the streams, %d before", g, before)
	}
}
