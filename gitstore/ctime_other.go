//go:build !linux

package gitstore

import (
	"io/fs"
	"time"
)

// changeTime is when a file was last changed: its modification time here.
func changeTime(fi fs.FileInfo) time.Time { return fi.ModTime() }
