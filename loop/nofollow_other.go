//go:build !unix

package loop

// syscallNoFollow: Lstat alone guards against links here.
const syscallNoFollow = 0

// syscallNonBlock: no pipe is opened by its name here.
const syscallNonBlock = 0
