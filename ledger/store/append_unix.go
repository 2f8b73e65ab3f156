//go:build unix

package store

import (
	"os"
	"syscall"
)

// canAppend says that the view's file is appended to here: its writers
// and readers lock it.
const canAppend = true

// lockFile takes an exclusive lock on f, trying writerTries times while
// another holds it (flockWait): held when another holds it still (then
// nothing is written), neither locked nor held when the file system locks
// nothing (then the file is written anew, as where nothing is locked).
//
// ReadStateFile reads under a shared lock, so that it reads no part of an
// append (one that cannot have the lock within readerTries, or on a file
// system that locks nothing, reads without it: the file's format refuses
// a part of an append, and OpenKept then reads again, waiting
// writerTries); the rename that writes a state file anew leaves a
// mapping of the old one whole, and an append changes no byte a reader
// mapped. What an append that fails part way leaves is never cut off again
// (a reader may have mapped it): the file's format makes a part of an
// append read as no file at all.
func lockFile(f *os.File) (locked, held bool) {
	err := flockWait(f, syscall.LOCK_EX, writerTries)
	return err == nil, busy(err)
}

func unlockFile(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
