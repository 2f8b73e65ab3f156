//go:build !unix

package loop

// syscallNoFollow: Lstat alone guards against links here.
const syscallNoFollow = 0
