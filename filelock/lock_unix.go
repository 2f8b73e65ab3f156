//go:build unix

// Package filelock takes exclusive locks on files, released by the kernel
// when the process dies (flock), so a crash never leaves a stale lock
// behind. Where flock is missing it falls back to git's <path>.lock
// protocol.
package filelock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Lock takes an exclusive lock on path, waiting for other holders. The
// kernel releases it when the process dies, so a crash never leaves a stale
// lock behind.
func Lock(path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening lock %s: %w", path, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// TryLock takes an exclusive lock on path if no one holds it; ok is
// false when someone does.
func TryLock(path string) (unlock func(), ok bool, err error) {
	l, ok, err := TryLockFile(path)
	if !ok || err != nil {
		return nil, ok, err
	}
	return l.Unlock, true, nil
}

// File is an exclusive lock held on an open file. The lock is the open
// file's, not its path's: a path removed or replaced while it is held
// names a file anyone can lock (see Intact).
type File struct {
	path string
	f    *os.File
}

// TryLockFile is TryLock that keeps the lock's file, to ask later whether
// its path still names it.
func TryLockFile(path string) (l *File, ok bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("opening lock %s: %w", path, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err == syscall.EWOULDBLOCK {
		f.Close()
		return nil, false, nil
	}
	if err != nil {
		f.Close()
		return nil, false, fmt.Errorf("locking %s: %w", path, err)
	}
	return &File{path: path, f: f}, true, nil
}

// Unlock lets the lock go.
func (l *File) Unlock() {
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
}

// Intact reports whether the lock's path still names the file the lock is
// held on: false when it was removed, or replaced by another file (which
// then is free to lock, and Held of the path says no one holds it).
func (l *File) Intact() (bool, error) {
	return intact(l.f, l.path)
}

// intact reports whether path names the open file f (following symbolic
// links, as opening the path does).
func intact(f *os.File, path string) (bool, error) {
	held, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", path, err)
	}
	now, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", path, err)
	}
	return os.SameFile(held, now), nil
}

// Held reports whether someone holds the exclusive lock on path now. It
// asks with a shared lock, dropped at once, so that any number of processes
// can ask at the same time without one of them seeing the others as the
// holder. A lock file that does not exist is not held.
func Held(path string) (bool, error) {
	// O_NONBLOCK: a FIFO left at the path does not hang the question.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("opening lock %s: %w", path, err)
	}
	defer f.Close()
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err == syscall.EWOULDBLOCK {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("locking %s: %w", path, err)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false, nil
}
