//go:build !unix

package gitstore

// ownedByUs cannot tell here: git rev-parse decides (safe.directory).
func ownedByUs(string) bool { return false }
