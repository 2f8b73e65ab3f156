//go:build unix

package goals

import (
	"os/exec"
	"syscall"
)

// ownGroup puts a check in a process group of its own, so that a timeout
// can end everything it started.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func killGroup(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// readFlags open a value file without waiting: a file swapped for a named
// pipe after it was found regular must not hang the read.
const readFlags = syscall.O_NONBLOCK
