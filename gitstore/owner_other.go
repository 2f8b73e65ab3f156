//go:build !unix

package gitstore

// ownedByUs cannot tell here: git rev-parse decides (safe.directory).
func ownedByUs(string) bool { return false }

// deviceOf cannot tell here: git rev-parse decides.
func deviceOf(string) (uint64, bool) { return 0, false }
