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
