//go:build !unix

package filelock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Lock takes an exclusive lock on path by creating path+".lock", as git
// does, waiting up to a minute for another holder.
func Lock(path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	lock := path + ".lock"
	deadline := time.Now().Add(time.Minute)
	for {
		f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			f.Close()
			return func() { os.Remove(lock) }, nil
		}
		if !errors.Is(err, fs.ErrExist) || time.Now().After(deadline) {
			return nil, fmt.Errorf("cannot lock %s (remove it if no git-evolve is running): %w", lock, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TryLock takes the lock on path if no one holds it; ok is false when
// someone does.
func TryLock(path string) (unlock func(), ok bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, false, err
	}
	lock := path + ".lock"
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("cannot lock %s: %w", lock, err)
	}
	f.Close()
	return func() { os.Remove(lock) }, true, nil
}

// Held reports whether someone holds the lock on path now: its .lock file
// is there. Asking takes nothing, so any number can ask at once.
func Held(path string) (bool, error) {
	_, err := os.Stat(path + ".lock")
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
