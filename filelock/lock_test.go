package filelock

import (
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
