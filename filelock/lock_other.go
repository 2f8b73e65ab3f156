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
	l, ok, err := TryLockFile(path)
	if !ok || err != nil {
		return nil, ok, err
	}
	return l.Unlock, true, nil
}

// File is a lock held: its .lock file, as it was made. A .lock file
// removed or replaced while it is held is someone else's (see Intact).
type File struct {
	lock string
	made os.FileInfo
}

// TryLockFile is TryLock that keeps what the lock's file was, to ask later
// whether it is still there.
func TryLockFile(path string) (l *File, ok bool, err error) {
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
	made, err := f.Stat()
	f.Close()
	if err != nil {
		os.Remove(lock)
		return nil, false, fmt.Errorf("cannot lock %s: %w", lock, err)
	}
	return &File{lock: lock, made: made}, true, nil
}

// Unlock lets the lock go: its .lock file is removed, unless it is no
// longer the one made (another's lock is left alone).
func (l *File) Unlock() {
	if ok, err := l.Intact(); ok && err == nil {
		os.Remove(l.lock)
	}
}

// Intact reports whether the lock's .lock file is still the one made:
// false when it was removed or replaced.
func (l *File) Intact() (bool, error) {
	now, err := os.Lstat(l.lock)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", l.lock, err)
	}
	return os.SameFile(l.made, now), nil
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
