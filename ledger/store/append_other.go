//go:build !unix

package store

import "os"

// canAppend says that the view's file is not appended to here, where no
// file is locked: every write writes it anew, by a rename.
const canAppend = false

func lockFile(f *os.File) (locked, held bool) { return false, false }

func unlockFile(f *os.File) {}
