//go:build unix

package loop

import "syscall"

// syscallNoFollow refuses to open a symbolic link.
const syscallNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// syscallNonBlock opens a pipe without waiting for its writer.
const syscallNonBlock = syscall.O_NONBLOCK
