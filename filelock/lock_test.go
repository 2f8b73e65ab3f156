package filelock

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.lock")
	if held, err := Held(path); err != nil || held {
		t.Fatalf("Held of a lock never taken = %v, %v; want false", held, err)
	}
	unlock, ok, err := TryLock(path)
	if err != nil || !ok {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	if held, err := Held(path); err != nil || !held {
		t.Errorf("Held while it is held = %v, %v; want true", held, err)
	}
	unlock()
	if held, err := Held(path); err != nil || held {
		t.Errorf("Held once let go = %v, %v; want false", held, err)
	}
}

// Many asking at once, with no holder, never see one another as the holder
// (asking with an exclusive try-lock did: two records written side by side
// were refused as if a run drove the worktree).
func TestHeldAskedAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.lock")
	unlock, ok, err := TryLock(path) // the file exists, as after any run
	if err != nil || !ok {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	unlock()
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := 0
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				held, err := Held(path)
				if err != nil {
					t.Error(err)
					return
				}
				if held {
					mu.Lock()
					seen++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if seen > 0 {
		t.Errorf("with no holder, %d of 3200 asks saw the lock held", seen)
	}
}

// A lock's path removed or replaced while it is held names a file no one
// holds: Intact says so, and Held of the path sees no holder.
func TestFileIntact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.lock")
	l, ok, err := TryLockFile(path)
	if err != nil || !ok {
		t.Fatalf("TryLockFile = %v, %v", ok, err)
	}
	defer l.Unlock()
	if intact, err := l.Intact(); err != nil || !intact {
		t.Fatalf("Intact of a lock as taken = %v, %v; want true", intact, err)
	}
	for _, p := range []string{path, path + ".lock"} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	if intact, err := l.Intact(); err != nil || intact {
		t.Errorf("Intact once its file was removed = %v, %v; want false", intact, err)
	}
	if held, err := Held(path); err != nil || held {
		t.Errorf("Held once its file was removed = %v, %v; want false", held, err)
	}
	// A file made anew at the path is not the one held, and is free.
	other, ok, err := TryLockFile(path)
	if err != nil || !ok {
		t.Fatalf("TryLockFile of the path made anew = %v, %v; want it free", ok, err)
	}
	if intact, err := l.Intact(); err != nil || intact {
		t.Errorf("Intact with another file at the path = %v, %v; want false", intact, err)
	}
	if intact, err := other.Intact(); err != nil || !intact {
		t.Errorf("Intact of the new lock = %v, %v; want true", intact, err)
	}
	other.Unlock()
}
