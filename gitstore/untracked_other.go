//go:build !linux

package gitstore

import "io/fs"

// statKeysAvailable says whether statKey can read a directory's key here:
// elsewhere than on Linux the untracked scan declines, and git is asked.
const statKeysAvailable = false

func statKey(fs.FileInfo) (dirKey, bool) { return dirKey{}, false }
